import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { KubeConfig, type V1Node } from '@kubernetes/client-node';
import { type Binaries, ensureBinaries } from './binaries.ts';
import { launchComponent, logTail, runningComponentPid, stopComponentProcess } from './component-process.ts';
import { type ControlPlanePorts, componentSpecs, schedulerConfiguration } from './component-specs.ts';
import { formatDuration } from './duration.ts';
import { createFakeNode, type FakeNodeOptions } from './fake-node.ts';
import { freePorts } from './free-ports.ts';
import { probeHealth } from './health-probe.ts';
import { stopRealNode } from './node/node-teardown.ts';
import { createPki, pkiFiles } from './pki.ts';
import { isProcessAlive } from './process-group.ts';
import { type Reaper, startReaper } from './reaper.ts';
import {
  mintServiceAccountKubeconfig,
  type ServiceAccountKubeconfig,
  type ServiceAccountKubeconfigOptions,
} from './service-account-kubeconfig.ts';
import {
  type ComponentName,
  type ControlPlaneState,
  componentNames,
  readState,
  type StateLayout,
  stateLayout,
  writeState,
} from './state-dir.ts';
import { pinnedVersions } from './versions.ts';
import { stopWaiting, waitFor } from './wait-for.ts';

/** Options of {@link startControlPlane}. */
export interface StartControlPlaneOptions {
  /**
   * State directory: certificates, kubeconfig, etcd data, logs, pid files. A directory left by an
   * earlier run is cleaned up first, stopping its processes. Default: a new temporary directory that
   * {@link ControlPlane.stop} removes.
   */
  readonly dir?: string;
  /** Per-component readiness timeout; default 60 s, as contended CI machines need 30 s and more. */
  readonly readyTimeoutMs?: number;
  /** Receives progress lines (binary build, component start). */
  readonly onProgress?: (message: string) => void;
  /**
   * Stop the control plane when the calling process exits, even when it crashes (default true).
   * `kube-testenv up` turns this off to leave the control plane running.
   */
  readonly stopOnExit?: boolean;
  /** Binaries to run instead of the pinned ones from the cache. */
  readonly binaries?: Binaries;
}

/** Start attempts when a port found free was taken before a component could bind it. */
const startAttempts = 3;
const defaultReadyTimeoutMs = 60_000;
/** Marks a directory as ours, so that a later start may wipe it. */
const markerFile = '.kube-testenv';

/** A component did not become ready; the message carries the tails of the component logs. */
export class ControlPlaneStartError extends Error {
  override readonly name = 'ControlPlaneStartError';
}

/**
 * A running control plane: etcd, kube-apiserver, kube-controller-manager (PV binder, PV/PVC
 * protection, ServiceAccounts, namespaces) and kube-scheduler on loopback. Any process may attach
 * to it through its state directory, so the fault hooks work from test workers too.
 */
export interface ControlPlane {
  /** The state directory. */
  readonly dir: string;
  /** Admin kubeconfig (`system:masters`). */
  readonly kubeconfigPath: string;
  /** Admin client configuration. */
  readonly kubeConfig: KubeConfig;
  /** Kubernetes release of the binaries, e.g. `v1.36.3`. */
  readonly kubernetesVersion: string;
  /** Directory of the binaries, including `kubectl`. */
  readonly binDir: string;
  /** Creates a fake Ready Node the scheduler accepts. */
  createNode(name: string, options?: FakeNodeOptions): Promise<V1Node>;
  /** Mints a kubeconfig for a ServiceAccount (created if missing) via the TokenRequest API. */
  serviceAccountKubeconfig(options: ServiceAccountKubeconfigOptions): Promise<ServiceAccountKubeconfig>;
  /** Pids of the running components; `undefined` for a stopped one. */
  processes(): Promise<Record<ComponentName, number | undefined>>;
  /** Stops one component (SIGTERM, SIGKILL after 10 s). etcd keeps its data. */
  stopComponent(name: ComponentName): Promise<void>;
  /** Starts a stopped component with its original flags and waits until it is ready. */
  startComponent(name: ComponentName, readyTimeoutMs?: number): Promise<void>;
  /** Stops and starts a component, e.g. kube-apiserver to drop every watch while etcd keeps the data. */
  restartComponent(name: ComponentName, readyTimeoutMs?: number): Promise<void>;
  /**
   * Compacts etcd's history up to its current revision and returns that revision. A watch or list
   * that asks kube-apiserver for an older resourceVersion than its watch cache holds then gets
   * 410 Gone; restart kube-apiserver afterwards to force that on watches that are open now.
   */
  compactEtcd(): Promise<number>;
  /**
   * Stops every component, newest first, and deletes etcd's data. Logs stay in the state
   * directory, unless it is a temporary one created by {@link startControlPlane}.
   */
  stop(): Promise<void>;
}

class RunningControlPlane implements ControlPlane {
  readonly dir: string;
  readonly kubeconfigPath: string;
  readonly kubeConfig: KubeConfig;
  readonly kubernetesVersion: string;
  readonly binDir: string;
  readonly #layout: StateLayout;
  readonly #state: ControlPlaneState;
  readonly #reaper: Reaper | undefined;
  readonly #removeDir: boolean;

  constructor(layout: StateLayout, state: ControlPlaneState, reaper?: Reaper, removeDir = false) {
    this.#layout = layout;
    this.#state = state;
    this.#reaper = reaper;
    this.#removeDir = removeDir;
    this.dir = layout.dir;
    this.kubeconfigPath = layout.kubeconfig;
    this.kubernetesVersion = state.kubernetesVersion;
    this.binDir = state.binDir;
    this.kubeConfig = new KubeConfig();
    this.kubeConfig.loadFromFile(layout.kubeconfig);
  }

  createNode(name: string, options?: FakeNodeOptions): Promise<V1Node> {
    return createFakeNode(this.kubeConfig, name, options);
  }

  serviceAccountKubeconfig(options: ServiceAccountKubeconfigOptions): Promise<ServiceAccountKubeconfig> {
    const path = join(this.#layout.kubeconfigsDir, `${options.namespace}.${options.name}.yaml`);
    return mintServiceAccountKubeconfig(this.kubeConfig, options, path);
  }

  async processes(): Promise<Record<ComponentName, number | undefined>> {
    const entries = await Promise.all(
      componentNames.map(
        async (name) =>
          [name, await runningComponentPid(this.#layout, name, this.#state.components[name])] as const,
      ),
    );
    return Object.fromEntries(entries) as Record<ComponentName, number | undefined>;
  }

  async stopComponent(name: ComponentName): Promise<void> {
    await stopComponentProcess(this.#layout, name, this.#state.components[name]);
  }

  async startComponent(name: ComponentName, readyTimeoutMs = defaultReadyTimeoutMs): Promise<void> {
    if ((await runningComponentPid(this.#layout, name, this.#state.components[name])) !== undefined) return;
    await startAndAwait(this.#layout, this.#state, name, readyTimeoutMs);
  }

  async restartComponent(name: ComponentName, readyTimeoutMs = defaultReadyTimeoutMs): Promise<void> {
    await this.stopComponent(name);
    await this.startComponent(name, readyTimeoutMs);
  }

  async compactEtcd(): Promise<number> {
    const post = async (path: string, body: unknown): Promise<unknown> => {
      const response = await fetch(`${this.#state.etcdUrl}${path}`, {
        method: 'POST',
        body: JSON.stringify(body),
      });
      if (!response.ok) throw new Error(`etcd ${path} answered ${response.status}: ${await response.text()}`);
      return response.json();
    };
    // Any key will do: every response header carries the store's current revision.
    const range = (await post('/v3/kv/range', { key: Buffer.from('/').toString('base64'), limit: 1 })) as {
      header?: { revision?: string };
    };
    const revision = Number(range.header?.revision);
    if (!Number.isSafeInteger(revision) || revision < 1) throw new Error('etcd reported no revision');
    await post('/v3/kv/compaction', { revision: String(revision), physical: true });
    return revision;
  }

  async stop(): Promise<void> {
    // A real node goes first: its kubelet and controllers talk to the API server until they stop.
    const nodeProblems = await stopRealNode(this.#layout.dir);
    await stopAll(this.#layout, this.#state);
    await rm(this.#layout.etcdDataDir, { recursive: true, force: true });
    await rm(this.#layout.stateFile, { force: true });
    this.#reaper?.release();
    if (this.#removeDir) await rm(this.#layout.dir, { recursive: true, force: true });
    if (nodeProblems.length > 0) {
      throw new Error(`the real node was not cleaned up fully:\n${nodeProblems.join('\n')}`);
    }
  }
}

async function stopAll(layout: StateLayout, state: ControlPlaneState | undefined): Promise<void> {
  const spec = (name: ComponentName) => state?.components[name];
  await Promise.all(
    (['kube-scheduler', 'kube-controller-manager'] as const).map((name) =>
      stopComponentProcess(layout, name, spec(name)),
    ),
  );
  await stopComponentProcess(layout, 'kube-apiserver', spec('kube-apiserver'));
  await stopComponentProcess(layout, 'etcd', spec('etcd'));
}

async function startAndAwait(
  layout: StateLayout,
  state: ControlPlaneState,
  name: ComponentName,
  timeoutMs: number,
): Promise<void> {
  const spec = state.components[name];
  const pid = await launchComponent(layout, name, spec);
  const ca = await readFile(pkiFiles(layout.pkiDir).caCert, 'utf8');
  await waitFor(
    async () => {
      if (!isProcessAlive(pid)) throw stopWaiting(new Error(`${name} exited during start-up`));
      return (await probeHealth(spec.healthUrl, ca)).ok;
    },
    { timeoutMs, intervalMs: 250, description: `${name} to become ready at ${spec.healthUrl}` },
  );
}

/** Attaches to the control plane running in a state directory, e.g. from a test worker. */
export async function attachControlPlane(dir: string): Promise<ControlPlane> {
  const layout = stateLayout(resolve(dir));
  const state = await readState(layout);
  if (!state) throw new Error(`no kube-testenv control plane in ${layout.dir}`);
  return new RunningControlPlane(layout, state);
}

/**
 * Stops the processes a previous run recorded in `dir` (it may have crashed) and empties the
 * directory. Refuses a non-empty directory that kube-testenv did not create.
 */
async function reclaimDir(layout: StateLayout): Promise<void> {
  const entries: string[] = await readdir(layout.dir).catch(() => []);
  if (entries.length > 0) {
    if (!entries.includes(markerFile)) {
      throw new Error(
        `${layout.dir} is not empty and was not created by kube-testenv; choose another directory`,
      );
    }
    // Before anything is deleted: a node's mounts live in the directory.
    await stopRealNode(layout.dir);
    await stopAll(layout, await readState(layout));
    await Promise.all(entries.map((entry) => rm(join(layout.dir, entry), { recursive: true, force: true })));
  }
  await mkdir(layout.dir, { recursive: true });
  await writeFile(
    join(layout.dir, markerFile),
    'state directory of kube-testenv; safe to delete when stopped\n',
  );
}

/**
 * Starts a control plane: builds or reuses the pinned binaries, creates certificates and the admin
 * kubeconfig, then starts etcd, kube-apiserver, kube-controller-manager and kube-scheduler on free
 * loopback ports, each gated on its health endpoint. On failure everything started is stopped and the
 * error carries the tails of the component logs.
 */
export async function startControlPlane(options: StartControlPlaneOptions = {}): Promise<ControlPlane> {
  const report = options.onProgress ?? (() => {});
  const removeDir = options.dir === undefined;
  const layout = stateLayout(resolve(options.dir ?? (await mkdtemp(join(tmpdir(), 'kube-testenv-')))));
  await reclaimDir(layout);
  const binaries = options.binaries ?? (await ensureBinaries({ onProgress: report }));
  const started = Date.now();
  const pki = await createPki(layout.pkiDir);
  const reaper = options.stopOnExit === false ? undefined : startReaper(layout.pidsDir);
  const readyTimeoutMs = options.readyTimeoutMs ?? defaultReadyTimeoutMs;

  for (let attempt = 1; ; attempt++) {
    const [etcdClient = 0, etcdPeer = 0, apiserver = 0, controllerManager = 0, scheduler = 0] =
      await freePorts(5);
    const ports: ControlPlanePorts = { etcdClient, etcdPeer, apiserver, controllerManager, scheduler };
    const state: ControlPlaneState = {
      kubernetesVersion: options.binaries ? 'unknown' : pinnedVersions.kubernetes,
      binDir: binaries.dir,
      server: `https://127.0.0.1:${apiserver}`,
      etcdUrl: `http://127.0.0.1:${etcdClient}`,
      components: componentSpecs(layout, binaries, pki, ports),
    };
    await writeAdminKubeconfig(layout, state.server);
    await writeFile(layout.schedulerConfig, schedulerConfiguration(layout.kubeconfig));
    await writeState(layout, state);
    try {
      await startAndAwait(layout, state, 'etcd', readyTimeoutMs);
      report(`etcd ready (${formatDuration(Date.now() - started)})`);
      await startAndAwait(layout, state, 'kube-apiserver', readyTimeoutMs);
      report(`kube-apiserver ready at ${state.server} (${formatDuration(Date.now() - started)})`);
      await Promise.all([
        startAndAwait(layout, state, 'kube-controller-manager', readyTimeoutMs),
        startAndAwait(layout, state, 'kube-scheduler', readyTimeoutMs),
      ]);
      report(`control plane ready in ${formatDuration(Date.now() - started)}; state in ${layout.dir}`);
      return new RunningControlPlane(layout, state, reaper, removeDir);
    } catch (err) {
      const tails = await Promise.all(
        componentNames.map(async (name) => ({ name, tail: await logTail(layout, name) })),
      );
      await stopAll(layout, state);
      const portClash = tails.some(({ tail }) => tail.includes('address already in use'));
      if (portClash && attempt < startAttempts) {
        report(`a port was taken meanwhile; retrying (attempt ${attempt + 1} of ${startAttempts})`);
        await rm(layout.etcdDataDir, { recursive: true, force: true });
        await rm(layout.logsDir, { recursive: true, force: true });
        continue;
      }
      reaper?.release();
      const logs = tails
        .filter(({ tail }) => tail.length > 0)
        .map(({ name, tail }) => `--- ${name} (${join(layout.logsDir, `${name}.log`)}) ---\n${tail}`)
        .join('\n');
      throw new ControlPlaneStartError(`control plane failed to start: ${(err as Error).message}\n${logs}`, {
        cause: err,
      });
    }
  }
}

async function writeAdminKubeconfig(layout: StateLayout, server: string): Promise<void> {
  const pki = pkiFiles(layout.pkiDir);
  const [ca, cert, key] = await Promise.all(
    [pki.caCert, pki.adminCert, pki.adminKey].map((file) => readFile(file, 'base64')),
  );
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'kube-testenv', server, caData: ca, skipTLSVerify: false }],
    users: [{ name: 'admin', certData: cert, keyData: key }],
    contexts: [{ name: 'kube-testenv', cluster: 'kube-testenv', user: 'admin' }],
    currentContext: 'kube-testenv',
  });
  await writeFile(layout.kubeconfig, kubeConfig.exportConfig(), { mode: 0o600 });
}
