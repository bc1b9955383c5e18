/**
 * The `helm` executable for chart tests, built from the Go module proxy like the control plane (see
 * binaries.ts) and cached per version under the testenv cache root, so CI needs no download of a
 * prebuilt binary.
 */
import { access, mkdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import {
  acquireLock,
  defaultCacheRoot,
  type EnsureBinariesOptions,
  freshModule,
  goForBuild,
} from './binaries.ts';
import { formatDuration } from './duration.ts';
import { pinnedHelmVersion } from './versions.ts';

const helmCommand = 'helm.sh/helm/v4/cmd/helm';
const progressIntervalMs = 30_000;

/** Options of {@link helmBinary}: the same cache root, progress and environment as the control plane's. */
export type HelmBinaryOptions = EnsureBinariesOptions;

/**
 * `-ldflags` that stamp the release into `helm version`, as Helm's own Makefile does; the commit is
 * unknown to the module proxy and left empty.
 */
export function helmLdflags(version: string): string {
  if (!/^v\d+\.\d+\.\d+$/.test(version)) throw new Error(`not a Helm release tag: ${version}`);
  const pkg = 'helm.sh/helm/v4/internal/version';
  return [
    '-s',
    '-w',
    `-X ${pkg}.version=${version}`,
    `-X ${pkg}.gitCommit=`,
    `-X ${pkg}.gitTreeState=clean`,
  ].join(' ');
}

/** Directory holding the cached build of one Helm version. */
export function helmCacheDir(cacheRoot: string, version: string = pinnedHelmVersion): string {
  return join(cacheRoot, `helm-${version}`);
}

async function exists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}

/**
 * Returns the absolute path of the pinned `helm`, building it on a cache miss. A cache hit never runs
 * Go; concurrent callers share one build through a lock directory.
 */
export async function helmBinary(options: HelmBinaryOptions = {}): Promise<string> {
  const versionDir = helmCacheDir(options.cacheRoot ?? defaultCacheRoot(options.env));
  const helm = join(versionDir, 'bin', 'helm');
  if (await exists(helm)) return helm;

  await mkdir(versionDir, { recursive: true });
  const release = await acquireLock(join(versionDir, 'build.lock'), options.onProgress);
  try {
    // Another process may have finished the build while this one waited for the lock.
    if (!(await exists(helm))) await build(versionDir, helm, options);
    return helm;
  } finally {
    await release();
  }
}

async function build(versionDir: string, helm: string, options: HelmBinaryOptions): Promise<void> {
  const report = options.onProgress ?? (() => {});
  const { go, logFile } = await goForBuild(versionDir, options.env, `Helm ${pinnedHelmVersion}`);
  const started = Date.now();
  report(`cold build of Helm ${pinnedHelmVersion}; log: ${logFile}`);
  const ticker = setInterval(
    () => report(`still building Helm (${formatDuration(Date.now() - started)} elapsed)`),
    progressIntervalMs,
  );
  try {
    const moduleDir = await freshModule(join(versionDir, 'module'), 'kube-testenv/helm', go);
    await go(moduleDir, 'get', '-tool', `${helmCommand}@${pinnedHelmVersion}`);
    await go(moduleDir, 'mod', 'tidy');
    // Built beside the final path and renamed, so a killed build never leaves a truncated `helm`.
    const partial = `${helm}.partial-${process.pid}`;
    await mkdir(join(versionDir, 'bin'), { recursive: true });
    await go(
      moduleDir,
      'build',
      '-trimpath',
      '-ldflags',
      helmLdflags(pinnedHelmVersion),
      '-o',
      partial,
      helmCommand,
    );
    await rename(partial, helm);
    await rm(moduleDir, { recursive: true, force: true });
  } finally {
    clearInterval(ticker);
  }
  report(`built Helm ${pinnedHelmVersion} in ${formatDuration(Date.now() - started)} into ${helm}`);
}
