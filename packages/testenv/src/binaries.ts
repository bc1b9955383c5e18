import { access, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { MissingToolError, runCommand } from './command.ts';
import { formatDuration } from './duration.ts';
import { goVersionAtLeast, stagingModules, versionLdflags } from './go-wrapper.ts';
import { isProcessAlive } from './process-group.ts';
import { cacheKey, pinnedVersions, stagingVersion } from './versions.ts';

/** Absolute paths of the control-plane executables of one version. */
export interface Binaries {
  readonly dir: string;
  readonly etcd: string;
  readonly kubeApiserver: string;
  readonly kubeControllerManager: string;
  readonly kubeScheduler: string;
  readonly kubectl: string;
}

/** Options of {@link ensureBinaries}. */
export interface EnsureBinariesOptions {
  /** Cache root; defaults to {@link defaultCacheRoot}. */
  readonly cacheRoot?: string;
  /** Receives progress lines of a cold build (which binary, elapsed time). */
  readonly onProgress?: (message: string) => void;
  /** Environment for `go`; defaults to `process.env`. */
  readonly env?: NodeJS.ProcessEnv;
}

const kubernetesCommands = [
  'kube-apiserver',
  'kube-controller-manager',
  'kube-scheduler',
  'kubectl',
] as const;
const etcdModule = 'go.etcd.io/etcd/server/v3';
const progressIntervalMs = 30_000;
const lockPollMs = 1000;

/** `${XDG_CACHE_HOME:-~/.cache}/kube-provisioner/testenv`. */
export function defaultCacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CACHE_HOME || join(env.HOME || homedir(), '.cache');
  return join(base, 'kube-provisioner', 'testenv');
}

function binariesIn(dir: string): Binaries {
  return {
    dir,
    etcd: join(dir, 'etcd'),
    kubeApiserver: join(dir, 'kube-apiserver'),
    kubeControllerManager: join(dir, 'kube-controller-manager'),
    kubeScheduler: join(dir, 'kube-scheduler'),
    kubectl: join(dir, 'kubectl'),
  };
}

async function allExist(binaries: Binaries): Promise<boolean> {
  const files = [binaries.etcd, binaries.kubeApiserver, binaries.kubeControllerManager];
  files.push(binaries.kubeScheduler, binaries.kubectl);
  try {
    await Promise.all(files.map((file) => access(file)));
    return true;
  } catch {
    return false;
  }
}

/**
 * Returns the pinned etcd and Kubernetes binaries, building them from the Go module proxy on a cache
 * miss. A cache hit never runs Go. Concurrent callers share one build through a lock directory.
 */
export async function ensureBinaries(options: EnsureBinariesOptions = {}): Promise<Binaries> {
  const versionDir = join(options.cacheRoot ?? defaultCacheRoot(options.env), cacheKey(pinnedVersions));
  const binaries = binariesIn(join(versionDir, 'bin'));
  if (await allExist(binaries)) return binaries;

  await mkdir(versionDir, { recursive: true });
  const release = await acquireLock(join(versionDir, 'build.lock'), options.onProgress);
  try {
    // Another process may have finished the build while this one waited for the lock.
    if (await allExist(binaries)) return binaries;
    await build(versionDir, binaries.dir, options);
    return binaries;
  } finally {
    await release();
  }
}

/**
 * Takes the build lock directory `lockDir`, waiting while a live process holds it and taking over from a
 * dead one; resolves with its release function.
 */
export async function acquireLock(
  lockDir: string,
  onProgress?: (message: string) => void,
): Promise<() => Promise<void>> {
  let reported = false;
  for (;;) {
    try {
      await mkdir(lockDir);
      await writeFile(join(lockDir, 'pid'), String(process.pid));
      return () => rm(lockDir, { recursive: true, force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const owner = Number(await readFile(join(lockDir, 'pid'), 'utf8').catch(() => ''));
    if (owner && !isProcessAlive(owner)) {
      await rm(lockDir, { recursive: true, force: true });
      continue;
    }
    if (!reported) onProgress?.(`waiting for the build running in process ${owner || '?'} (${lockDir})`);
    reported = true;
    await new Promise((resolve) => setTimeout(resolve, lockPollMs));
  }
}

/**
 * Removes the `bin.partial-<pid>` directories in `versionDir` of builds whose process is gone (killed
 * by a test's timeout, say), so an interrupted build leaves nothing behind once the next one starts.
 * A live process's directory stays: it may still be building.
 */
export async function removeStalePartials(versionDir: string): Promise<void> {
  const entries = await readdir(versionDir).catch(() => [] as string[]);
  for (const entry of entries) {
    const pid = Number(/^bin\.partial-(\d+)$/u.exec(entry)?.[1]);
    if (pid > 0 && (pid === process.pid || !isProcessAlive(pid))) {
      await rm(join(versionDir, entry), { recursive: true, force: true });
    }
  }
}

/** Runs `go` with `args` in `cwd`; resolves with its standard output. */
export type GoCommand = (cwd: string, ...args: string[]) => Promise<string>;

/**
 * The `go` of one cached build in `versionDir`: cgo off, output logged to its `build.log` (emptied
 * now), once the toolchain is checked to be at least the pinned Go. `needs` says what Go builds, for
 * the message when it is missing.
 */
export async function goForBuild(
  versionDir: string,
  processEnv: NodeJS.ProcessEnv | undefined,
  needs: string,
): Promise<{ go: GoCommand; logFile: string }> {
  const env = { ...(processEnv ?? process.env), CGO_ENABLED: '0' };
  const logFile = join(versionDir, 'build.log');
  await writeFile(logFile, '');
  const missingHint = `kube-testenv builds ${needs} from the Go module proxy on first use and needs Go >= ${pinnedVersions.go} (https://go.dev/dl/)`;
  const go: GoCommand = (cwd, ...args) => runCommand('go', args, { cwd, env, logFile, missingHint });
  const goVersion = await go(versionDir, 'version');
  if (!goVersionAtLeast(goVersion, pinnedVersions.go)) {
    throw new MissingToolError('go', `found ${goVersion.trim()}, need Go >= ${pinnedVersions.go}`);
  }
  return { go, logFile };
}

async function build(versionDir: string, binDir: string, options: EnsureBinariesOptions): Promise<void> {
  const report = options.onProgress ?? (() => {});
  const { go, logFile } = await goForBuild(
    versionDir,
    options.env,
    `etcd ${pinnedVersions.etcd} and Kubernetes ${pinnedVersions.kubernetes} (or set TESTENV_KUBECONFIG to use an existing cluster)`,
  );

  const started = Date.now();
  report(
    `cold build of etcd ${pinnedVersions.etcd} and Kubernetes ${pinnedVersions.kubernetes}; log: ${logFile}`,
  );
  const partial = join(versionDir, `bin.partial-${process.pid}`);
  await removeStalePartials(versionDir);
  await mkdir(partial, { recursive: true });
  const total = kubernetesCommands.length + 1;
  const step = async (index: number, name: string, run: () => Promise<unknown>): Promise<void> => {
    const stepStarted = Date.now();
    report(`[${index}/${total}] building ${name}`);
    const ticker = setInterval(
      () =>
        report(
          `[${index}/${total}] still building ${name} (${formatDuration(Date.now() - started)} elapsed)`,
        ),
      progressIntervalMs,
    );
    try {
      await run();
    } finally {
      clearInterval(ticker);
    }
    report(`[${index}/${total}] built ${name} in ${formatDuration(Date.now() - stepStarted)}`);
  };

  const etcdDir = await freshModule(join(versionDir, 'etcd'), 'kube-testenv/etcd', go);
  await step(1, 'etcd', async () => {
    await go(etcdDir, 'get', '-tool', `${etcdModule}@${pinnedVersions.etcd}`);
    await go(etcdDir, 'mod', 'tidy');
    await go(etcdDir, 'build', '-trimpath', '-o', join(partial, 'etcd'), etcdModule);
  });

  const k8sDir = await freshModule(join(versionDir, 'kubernetes'), 'kube-testenv/kubernetes', go);
  const kubernetesModule = `k8s.io/kubernetes@${pinnedVersions.kubernetes}`;
  // Read k/k's own go.mod while the wrapper has no requirements yet: its staging list changes per minor.
  const download = JSON.parse(await go(k8sDir, 'mod', 'download', '-json', kubernetesModule)) as {
    GoMod: string;
    Info: string;
  };
  const staging = stagingVersion(pinnedVersions.kubernetes);
  const replaces = stagingModules(await readFile(download.GoMod, 'utf8')).map(
    (module) => `-replace=${module}=${module}@${staging}`,
  );
  await go(k8sDir, 'mod', 'edit', ...replaces, `-require=${kubernetesModule}`);
  await go(
    k8sDir,
    'get',
    '-tool',
    ...kubernetesCommands.map((cmd) => `k8s.io/kubernetes/cmd/${cmd}@${pinnedVersions.kubernetes}`),
  );
  await go(k8sDir, 'mod', 'tidy');
  const info = JSON.parse(await readFile(download.Info, 'utf8')) as { Time: string };
  const ldflags = versionLdflags(pinnedVersions.kubernetes, info.Time);
  for (const [i, cmd] of kubernetesCommands.entries()) {
    await step(i + 2, cmd, () =>
      go(
        k8sDir,
        'build',
        '-trimpath',
        '-ldflags',
        ldflags,
        '-o',
        join(partial, cmd),
        `k8s.io/kubernetes/cmd/${cmd}`,
      ),
    );
  }
  await rm(binDir, { recursive: true, force: true });
  await rename(partial, binDir);
  report(`built all binaries in ${formatDuration(Date.now() - started)} into ${binDir}`);
}

/** Creates an empty wrapper Go module `path` in `dir`, at the pinned `go` line, and returns `dir`. */
export async function freshModule(dir: string, path: string, go: GoCommand): Promise<string> {
  // Regenerated on every cold build so a version bump never inherits stale requirements.
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  await go(dir, 'mod', 'init', path);
  await go(dir, 'mod', 'edit', `-go=${pinnedVersions.go}`);
  return dir;
}
