/**
 * Pure helpers for the wrapper Go modules that build the Kubernetes binaries: `k8s.io/kubernetes`
 * points its staging modules at `./staging/src/…` with `replace`, which only the main module may do,
 * so a wrapper main module must replace each of them with its published tag instead.
 */

/** Module paths that a `k8s.io/kubernetes` go.mod replaces with a directory under `./staging`. */
export function stagingModules(goMod: string): string[] {
  const modules = new Set<string>();
  for (const match of goMod.matchAll(/^\s*(?:replace\s+)?(k8s\.io\/[\w.-]+)\s+=>\s+\.\/staging\//gm)) {
    if (match[1]) modules.add(match[1]);
  }
  return [...modules].sort();
}

/**
 * `-ldflags` value that stamps the release into the binaries, so `/version` and `kubectl version`
 * report it instead of `v0.0.0-master`. The commit is unknown to the module proxy and left empty.
 */
export function versionLdflags(kubernetes: string, buildDate: string): string {
  const match = /^v(\d+)\.(\d+)\./.exec(kubernetes);
  if (!match) throw new Error(`not a Kubernetes release tag: ${kubernetes}`);
  const values: [string, string][] = [
    ['gitVersion', kubernetes],
    ['gitMajor', match[1] ?? ''],
    ['gitMinor', match[2] ?? ''],
    ['gitCommit', ''],
    ['gitTreeState', 'clean'],
    ['buildDate', buildDate],
  ];
  const flags = ['k8s.io/component-base/version', 'k8s.io/client-go/pkg/version'].flatMap((pkg) =>
    values.map(([name, value]) => `-X ${pkg}.${name}=${value}`),
  );
  return ['-s', '-w', ...flags].join(' ');
}

/** Whether the `go version` output names a toolchain at least as new as `minimum` (e.g. `1.26.0`). */
export function goVersionAtLeast(goVersionOutput: string, minimum: string): boolean {
  const found = /go(\d+)\.(\d+)(?:\.(\d+))?/.exec(goVersionOutput);
  if (!found) return false;
  const have = [found[1], found[2], found[3] ?? '0'].map(Number);
  const want = minimum.split('.').map(Number);
  for (let i = 0; i < 3; i++) {
    const diff = (have[i] ?? 0) - (want[i] ?? 0);
    if (diff !== 0) return diff > 0;
  }
  return true;
}
