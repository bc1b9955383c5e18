/**
 * The executables of a real node, built from the Go module proxy on first use and cached beside the
 * control plane's (see binaries.ts): the kubelet of the pinned Kubernetes release, containerd with its
 * runc shim and `ctr`, the two CNI plugins a bridge network needs, and the two small programs of
 * go-programs.ts (the sandbox image's pause, and the Service relay). runc itself needs cgo and
 * libseccomp, so the host's (Debian's `runc`) is used.
 */
import { access, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  acquireLock,
  defaultCacheRoot,
  type EnsureBinariesOptions,
  freshModule,
  type GoCommand,
  goForBuild,
  removeStalePartials,
} from '../binaries.ts';
import { runCommand } from '../command.ts';
import { formatDuration } from '../duration.ts';
import { stagingModules, versionLdflags } from '../go-wrapper.ts';
import { pinnedNodeVersions, pinnedVersions, stagingVersion } from '../versions.ts';
import { pauseSource, serviceProxySource } from './go-programs.ts';

/** Absolute paths of a node's executables. */
export interface NodeBinaries {
  /** The version directory: `bin/` and the cached pause image live in it. */
  readonly versionDir: string;
  readonly dir: string;
  readonly kubelet: string;
  readonly containerd: string;
  /** `containerd-shim-runc-v2`; containerd finds it on `PATH`, so {@link dir} must lead it. */
  readonly containerdShim: string;
  readonly ctr: string;
  /** Directory of the CNI plugins `bridge` and `host-local`. */
  readonly cniDir: string;
  /** The sandbox program baked into the pause image. */
  readonly pause: string;
  /** Relays the `kubernetes` Service address to kube-apiserver (go-programs.ts). */
  readonly serviceProxy: string;
}

/** Options of {@link ensureNodeBinaries}: the same cache root, progress and environment as the control plane's. */
export type EnsureNodeBinariesOptions = EnsureBinariesOptions;

const containerdModule = 'github.com/containerd/containerd/v2';
const cniModule = 'github.com/containernetworking/plugins';
const cniPlugins = ['main/bridge', 'ipam/host-local'] as const;

/** `node-v1.36.3-containerd-v2.3.7-cni-v1.9.1`: the cache directory of one version set. */
export function nodeCacheKey(): string {
  const { containerd, cniPlugins: cni } = pinnedNodeVersions;
  return `node-${pinnedVersions.kubernetes}-containerd-${containerd}-cni-${cni}`;
}

function nodeBinariesIn(versionDir: string): NodeBinaries {
  const dir = join(versionDir, 'bin');
  return {
    versionDir,
    dir,
    kubelet: join(dir, 'kubelet'),
    containerd: join(dir, 'containerd'),
    containerdShim: join(dir, 'containerd-shim-runc-v2'),
    ctr: join(dir, 'ctr'),
    cniDir: join(dir, 'cni'),
    pause: join(dir, 'pause'),
    serviceProxy: join(dir, 'service-proxy'),
  };
}

async function allExist(binaries: NodeBinaries): Promise<boolean> {
  const files = [binaries.kubelet, binaries.containerd, binaries.containerdShim, binaries.ctr];
  files.push(binaries.pause, binaries.serviceProxy);
  files.push(...cniPlugins.map((plugin) => join(binaries.cniDir, plugin.split('/')[1] ?? plugin)));
  return Promise.all(files.map((file) => access(file))).then(
    () => true,
    () => false,
  );
}

/**
 * Returns the node's executables, building them on a cache miss (about a minute with warm Go caches;
 * the kubelet shares most packages with the control plane's binaries). A cache hit never runs Go.
 */
export async function ensureNodeBinaries(options: EnsureNodeBinariesOptions = {}): Promise<NodeBinaries> {
  const versionDir = join(options.cacheRoot ?? defaultCacheRoot(options.env), nodeCacheKey());
  const binaries = nodeBinariesIn(versionDir);
  if (await allExist(binaries)) return binaries;
  await mkdir(versionDir, { recursive: true });
  const release = await acquireLock(join(versionDir, 'build.lock'), options.onProgress);
  try {
    if (!(await allExist(binaries))) await build(binaries, options);
    return binaries;
  } finally {
    await release();
  }
}

async function build(binaries: NodeBinaries, options: EnsureNodeBinariesOptions): Promise<void> {
  const report = options.onProgress ?? (() => {});
  const { versionDir } = binaries;
  const { containerd, cniPlugins: cni } = pinnedNodeVersions;
  const { go, logFile } = await goForBuild(
    versionDir,
    options.env,
    `the kubelet ${pinnedVersions.kubernetes}, containerd ${containerd} and the CNI plugins ${cni} of a real node`,
  );
  const started = Date.now();
  report(`cold build of a real node (kubelet, containerd, CNI plugins); log: ${logFile}`);
  const partial = join(versionDir, `bin.partial-${process.pid}`);
  await removeStalePartials(versionDir);
  await mkdir(join(partial, 'cni'), { recursive: true });
  const step = async (name: string, run: () => Promise<unknown>): Promise<void> => {
    const stepStarted = Date.now();
    report(`building ${name}`);
    const ticker = setInterval(
      () => report(`still building ${name} (${formatDuration(Date.now() - started)} elapsed)`),
      30_000,
    );
    try {
      await run();
    } finally {
      clearInterval(ticker);
    }
    report(`built ${name} in ${formatDuration(Date.now() - stepStarted)}`);
  };
  // `go install <pkg>@<version>` needs no wrapper module: these are ordinary Go modules.
  const install = (bin: string, packages: readonly string[], ldflags = '-s -w') =>
    runCommand('go', ['install', '-trimpath', `-ldflags=${ldflags}`, ...packages], {
      env: { ...(options.env ?? process.env), CGO_ENABLED: '0', GOBIN: bin },
      logFile,
    });

  await step(`kubelet ${pinnedVersions.kubernetes}`, () => buildKubelet(versionDir, partial, go));
  await step(`containerd ${containerd}`, () =>
    install(
      partial,
      ['containerd', 'containerd-shim-runc-v2', 'ctr'].map(
        (cmd) => `${containerdModule}/cmd/${cmd}@${containerd}`,
      ),
      // As containerd's Makefile stamps it, so the Node reports `containerd://2.3.7`.
      `-s -w -X ${containerdModule}/version.Version=${containerd.replace(/^v/u, '')}`,
    ),
  );
  await step(`CNI plugins ${cni}`, () =>
    install(
      join(partial, 'cni'),
      cniPlugins.map((plugin) => `${cniModule}/plugins/${plugin}@${cni}`),
    ),
  );
  await step('pause and service-proxy', async () => {
    for (const [name, source] of [
      ['pause', pauseSource],
      ['service-proxy', serviceProxySource],
    ] as const) {
      const dir = join(versionDir, `${name}-module`);
      await rm(dir, { recursive: true, force: true });
      await mkdir(dir, { recursive: true });
      await writeFile(join(dir, 'go.mod'), `module kube-testenv/${name}\n\ngo ${pinnedVersions.go}\n`);
      await writeFile(join(dir, 'main.go'), source);
      await go(dir, 'build', '-trimpath', '-ldflags', '-s -w', '-o', join(partial, name), '.');
    }
  });
  await rm(binaries.dir, { recursive: true, force: true });
  await rename(partial, binaries.dir);
  report(`built the node's binaries in ${formatDuration(Date.now() - started)} into ${binaries.dir}`);
}

/**
 * The kubelet from a wrapper module like the control plane's (binaries.ts): `k8s.io/kubernetes`'s
 * staging modules replaced by their published tags, the release stamped into the version packages.
 */
async function buildKubelet(versionDir: string, outDir: string, go: GoCommand): Promise<void> {
  const moduleDir = await freshModule(join(versionDir, 'kubelet-module'), 'kube-testenv/kubelet', go);
  const kubernetesModule = `k8s.io/kubernetes@${pinnedVersions.kubernetes}`;
  const download = JSON.parse(await go(moduleDir, 'mod', 'download', '-json', kubernetesModule)) as {
    GoMod: string;
    Info: string;
  };
  const staging = stagingVersion(pinnedVersions.kubernetes);
  const replaces = stagingModules(await readFile(download.GoMod, 'utf8')).map(
    (module) => `-replace=${module}=${module}@${staging}`,
  );
  await go(moduleDir, 'mod', 'edit', ...replaces, `-require=${kubernetesModule}`);
  await go(moduleDir, 'get', '-tool', `k8s.io/kubernetes/cmd/kubelet@${pinnedVersions.kubernetes}`);
  await go(moduleDir, 'mod', 'tidy');
  const info = JSON.parse(await readFile(download.Info, 'utf8')) as { Time: string };
  const ldflags = versionLdflags(pinnedVersions.kubernetes, info.Time);
  await go(
    moduleDir,
    'build',
    '-trimpath',
    '-ldflags',
    ldflags,
    '-o',
    join(outDir, 'kubelet'),
    'k8s.io/kubernetes/cmd/kubelet',
  );
}
