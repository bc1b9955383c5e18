/**
 * A real node beside a testenv control plane: containerd (with the host's runc) and a kubelet that
 * registers as `system:node:<name>`, so pods scheduled to it really run, with their volumes, probes,
 * projected service-account tokens and graceful termination. Its state lives in `<control plane
 * dir>/node`; one runs per host.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { ApiException, CoreV1Api, KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { runCommand } from '../command.ts';
import type { ControlPlane } from '../control-plane.ts';
import { formatDuration } from '../duration.ts';
import { freePorts } from '../free-ports.ts';
import { probeHealth } from '../health-probe.ts';
import { defaultImagesCacheDir } from '../images/base-image.ts';
import { applyManifests } from '../manifests.ts';
import { pkiFiles } from '../pki.ts';
import { isProcessAlive } from '../process-group.ts';
import { stopWaiting, waitFor } from '../wait-for.ts';
import { snapshotHost } from './host-state.ts';
import { ensureNodeBinaries } from './node-binaries.ts';
import {
  cniConfList,
  containerdConfig,
  defaultPodNetwork,
  kubeletConfiguration,
  type PodNetwork,
} from './node-config.ts';
import { createKubeletCredentials, writeKubeletKubeconfig } from './node-credentials.ts';
import {
  containerdImages,
  ctrCommand,
  ensurePauseArchive,
  importArchive,
  importImageIndex,
  loadPodmanImage,
  runImage,
  sandboxImage,
} from './node-images.ts';
import { type NodeLayout, nodeLayout, shimSocketDir } from './node-layout.ts';
import {
  findExecutable,
  kubeletPort,
  kubeletPortInUse,
  realNodeUnavailableReason,
} from './node-preflight.ts';
import {
  launchNodeProcess,
  type NodeProcessName,
  nodeLogFile,
  nodeLogTail,
  nodeProcessNames,
  runningNodeProcess,
} from './node-processes.ts';
import { startNodeReaper } from './node-reaper.ts';
import { nodeProcessSpecs } from './node-specs.ts';
import { type NodeState, readNodeState, writeNodeState } from './node-state.ts';
import { teardownNode } from './node-teardown.ts';

export { stopRealNode } from './node-teardown.ts';

/** Options of {@link startRealNode}. */
export interface StartRealNodeOptions {
  /** The Node's name; default `testenv-node`. */
  readonly name?: string;
  /** Added to the Node's labels (`kubernetes.io/hostname=<name>` and the kubelet's own are always there). */
  readonly labels?: Readonly<Record<string, string>>;
  /** How long each process may take to become ready; default 60 s. */
  readonly readyTimeoutMs?: number;
  /** Receives progress lines (binary build, each process ready). */
  readonly onProgress?: (message: string) => void;
  /** Tear the node down when the calling process exits, even when it crashes (default true). */
  readonly stopOnExit?: boolean;
  /** The pod network; default bridge `ktenv0`, subnet `10.244.0.0/24`, service link `ktenvsvc0`. */
  readonly network?: PodNetwork;
}

/** This machine cannot run a real node (not root, a tool missing, another kubelet running…). */
export class RealNodeUnavailableError extends Error {
  override readonly name = 'RealNodeUnavailableError';
}

/** A real node did not become ready; the message carries the tails of its logs. */
export class RealNodeStartError extends Error {
  override readonly name = 'RealNodeStartError';
}

/** A running real node. */
export interface RealNode {
  /** The Node's name. */
  readonly name: string;
  /** The node's state directory (`<control plane dir>/node`): configuration, logs, containerd's data. */
  readonly dir: string;
  /** The host address the Node reports. */
  readonly nodeIp: string;
  /** Copies an image from podman's store into the node's containerd, unless it holds it already. */
  loadImage(image: string): Promise<void>;
  /**
   * Imports every platform of the OCI image index in the layout `layoutDir` (as `npm run image`
   * writes a manifest list) under `reference`; pods of the node run its host platform.
   */
  loadImageIndex(layoutDir: string, reference: string): Promise<void>;
  /**
   * Runs `command` in a throw-away container of `reference` for `platform` in the node's containerd
   * (not through the kubelet, whose CRI plugin only runs the host's platform); resolves with its output.
   */
  runImage(reference: string, command: readonly string[], platform: string): Promise<string>;
  /** The images the node's containerd holds. */
  images(): Promise<string[]>;
  /** Pids of the node's processes; `undefined` for one that is not running. */
  processes(): Promise<Record<NodeProcessName, number | undefined>>;
  /** The last lines of a process's log, e.g. the kubelet's, for a failure message. */
  logTail(name: NodeProcessName, lines?: number): Promise<string>;
  /**
   * Stops the kubelet, containerd and every container, restores the host (sysctls, fixed paths,
   * mounts, the bridges) and deletes the Node object; rejects naming what could not be undone.
   */
  stop(): Promise<void>;
}

const defaultName = 'testenv-node';
const defaultReadyTimeoutMs = 60_000;

class RunningRealNode implements RealNode {
  readonly name: string;
  readonly dir: string;
  readonly nodeIp: string;
  readonly #layout: NodeLayout;
  readonly #state: NodeState;
  readonly #release: (() => void) | undefined;

  constructor(layout: NodeLayout, state: NodeState, release?: () => void) {
    this.#layout = layout;
    this.#state = state;
    this.#release = release;
    this.name = state.name;
    this.dir = layout.dir;
    this.nodeIp = state.nodeIp;
  }

  #ctr(): (args: readonly string[]) => Promise<string> {
    return ctrCommand({ ctr: join(this.#state.binDir, 'ctr') }, this.#layout.containerdSocket);
  }

  loadImage(image: string): Promise<void> {
    return loadPodmanImage(this.#ctr(), image, join(defaultImagesCacheDir(), 'oci'));
  }

  loadImageIndex(layoutDir: string, reference: string): Promise<void> {
    return importImageIndex(this.#ctr(), layoutDir, reference);
  }

  runImage(reference: string, command: readonly string[], platform: string): Promise<string> {
    return runImage(this.#ctr(), reference, command, platform);
  }

  images(): Promise<string[]> {
    return containerdImages(this.#ctr());
  }

  async processes(): Promise<Record<NodeProcessName, number | undefined>> {
    const entries = await Promise.all(
      nodeProcessNames.map(async (name) => {
        const command = this.#state.processes[name]?.command ?? name;
        return [name, await runningNodeProcess(this.#layout, name, command)] as const;
      }),
    );
    return Object.fromEntries(entries) as Record<NodeProcessName, number | undefined>;
  }

  logTail(name: NodeProcessName, lines?: number): Promise<string> {
    return nodeLogTail(this.#layout, name, lines);
  }

  async stop(): Promise<void> {
    this.#release?.();
    const problems = await teardownNode(this.#layout);
    // Nothing would mark a Node without a kubelet NotReady (no node-lifecycle controller runs), so
    // the scheduler would keep placing pods on it.
    const admin = new KubeConfig();
    admin.loadFromFile(this.#state.adminKubeconfig);
    await admin
      .makeApiClient(CoreV1Api)
      .deleteNode({ name: this.name })
      .catch((err: unknown) => {
        if (!(err instanceof ApiException && err.code === 404))
          problems.push(`delete Node ${this.name}: ${String(err)}`);
      });
    if (problems.length > 0)
      throw new Error(`the real node was not cleaned up fully:\n${problems.join('\n')}`);
  }
}

/** The first IPv4 address of a host interface that is neither loopback nor a container bridge. */
function hostAddress(network: PodNetwork): string {
  for (const [device, addresses] of Object.entries(networkInterfaces())) {
    if (
      device === network.bridge ||
      device === network.serviceLink ||
      /^(veth|cni|podman|docker)/u.test(device)
    ) {
      continue;
    }
    const address = addresses?.find((entry) => entry.family === 'IPv4' && !entry.internal);
    if (address) return address.address;
  }
  throw new RealNodeUnavailableError('a real node needs a non-loopback IPv4 address for the Node to report');
}

function tcpReachable(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * Starts a real node for `controlPlane`: builds or reuses its binaries, starts containerd, the
 * `kubernetes` Service relay, the workload controllers and the kubelet, and resolves once the Node is
 * Ready. A node left in the same directory by an earlier run is torn down first. Rejects with
 * {@link RealNodeUnavailableError} when this machine cannot run one, and with
 * a `RealNodeStartError` (after cleaning up) when it did not start.
 */
export async function startRealNode(
  controlPlane: ControlPlane,
  options: StartRealNodeOptions = {},
): Promise<RealNode> {
  const report = options.onProgress ?? (() => {});
  const reason = realNodeUnavailableReason();
  if (reason) throw new RealNodeUnavailableError(reason);
  const layout = nodeLayout(controlPlane.dir);
  if (await attachRealNode(controlPlane.dir)) {
    throw new RealNodeUnavailableError(
      `a real node already runs for the control plane in ${controlPlane.dir}; use attachRealNode`,
    );
  }
  // What an earlier run left behind (it crashed, and its watchdog could not finish).
  await teardownNode(layout);
  if (await kubeletPortInUse()) {
    throw new RealNodeUnavailableError(
      `port ${kubeletPort} is in use: another kubelet (or real node) runs on this host`,
    );
  }
  const binaries = await ensureNodeBinaries({ onProgress: report });
  const pauseArchive = await ensurePauseArchive(binaries);
  const started = Date.now();
  const network = options.network ?? defaultPodNetwork;
  const name = options.name ?? defaultName;
  const pki = pkiFiles(join(controlPlane.dir, 'pki'));
  const server = controlPlane.kubeConfig.getCurrentCluster()?.server ?? '';
  const core = controlPlane.kubeConfig.makeApiClient(CoreV1Api);
  const service = await core.readNamespacedService({ namespace: 'default', name: 'kubernetes' });
  const serviceIp = service.spec?.clusterIP ?? '';
  const servicePort = service.spec?.ports?.[0]?.port ?? 443;
  const [controllerManagerPort = 0] = await freePorts(1);
  const nodeIp = hostAddress(network);
  const runc = findExecutable('runc') ?? 'runc';
  const specs = nodeProcessSpecs({
    layout,
    binaries,
    kubeControllerManager: join(controlPlane.binDir, 'kube-controller-manager'),
    pki,
    adminKubeconfig: controlPlane.kubeconfigPath,
    name,
    nodeIp,
    labels: options.labels ?? {},
    apiserverAddress: new URL(server).host,
    serviceAddress: `${serviceIp}:${servicePort}`,
    controllerManagerPort,
  });
  const state: NodeState = {
    name,
    nodeIp,
    server,
    adminKubeconfig: controlPlane.kubeconfigPath,
    network,
    serviceIp,
    runc,
    binDir: binaries.dir,
    processes: specs,
    host: await snapshotHost(),
  };
  await mkdir(layout.dir, { recursive: true });
  // Recorded before anything changes, so that any later teardown knows what to undo.
  await writeNodeState(layout, state);
  const reaper = options.stopOnExit === false ? undefined : startNodeReaper(controlPlane.dir);
  const readyTimeoutMs = options.readyTimeoutMs ?? defaultReadyTimeoutMs;
  const ca = await readFile(pki.caCert, 'utf8');
  const launch = async (processName: NodeProcessName, ready: () => Promise<boolean>): Promise<void> => {
    const pid = await launchNodeProcess(layout, processName, specs[processName]);
    await waitFor(
      async () => {
        if (!isProcessAlive(pid)) throw stopWaiting(new Error(`${processName} exited during start-up`));
        return ready();
      },
      { timeoutMs: readyTimeoutMs, intervalMs: 250, description: `${processName} to become ready` },
    );
    report(`${processName} ready (${formatDuration(Date.now() - started)})`);
  };
  try {
    for (const dir of [layout.pkiDir, layout.cniConfDir, layout.cniDataDir, layout.podLogsDir]) {
      await mkdir(dir, { recursive: true });
    }
    await mkdir(layout.volumePluginDir, { recursive: true });
    await mkdir(shimSocketDir, { recursive: true });
    await mkdir(join(layout.containerdConfig, '..'), { recursive: true });
    await writeFile(layout.containerdConfig, containerdConfig(layout, binaries, sandboxImage, runc));
    await writeFile(join(layout.cniConfDir, '10-kube-testenv.conflist'), cniConfList(layout, network));
    await writeFile(layout.kubeletConfig, kubeletConfiguration(layout, { clientCaFile: pki.caCert }));
    const credentials = await createKubeletCredentials(layout.pkiDir, pki, name);
    await writeKubeletKubeconfig(layout.kubeletKubeconfig, server, pki.caCert, credentials, name);
    // Pods reach kube-apiserver through the relay listening on the Service address.
    await runCommand('ip', ['link', 'add', network.serviceLink, 'type', 'bridge']);
    await runCommand('ip', ['address', 'add', `${serviceIp}/32`, 'dev', network.serviceLink]);
    await runCommand('ip', ['link', 'set', network.serviceLink, 'up']);

    const ctr = ctrCommand(binaries, layout.containerdSocket);
    await launch('containerd', () =>
      ctr(['version']).then(
        () => true,
        () => false,
      ),
    );
    await importArchive(ctr, pauseArchive);
    await launch('service-proxy', () => tcpReachable(serviceIp, servicePort));
    await applyManifests(controlPlane.kubeConfig, [apiserverKubeletAccess()]);
    await launch('kube-controller-manager', () =>
      probeHealth(`https://127.0.0.1:${controllerManagerPort}/healthz`, ca).then(
        (result) => result.ok,
        () => false,
      ),
    );
    // A Node of this name left by an earlier kubelet still reads Ready: nothing marks it otherwise.
    await core.deleteNode({ name }).catch((err: unknown) => {
      if (!(err instanceof ApiException && err.code === 404)) throw err;
    });
    await launch('kubelet', async () => {
      const node = await core.readNode({ name }).catch(() => undefined);
      return node?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
    });
    report(`real node ${name} ready in ${formatDuration(Date.now() - started)}; state in ${layout.dir}`);
    return new RunningRealNode(layout, state, () => reaper?.release());
  } catch (err) {
    const tails = await Promise.all(
      nodeProcessNames.map(async (process) => {
        const tail = await nodeLogTail(layout, process, 40);
        return tail ? `--- ${process} (${nodeLogFile(layout, process)}) ---\n${tail}` : '';
      }),
    );
    reaper?.release();
    const problems = await teardownNode(layout);
    throw new RealNodeStartError(
      [
        `the real node failed to start: ${(err as Error).message}`,
        ...problems,
        ...tails.filter(Boolean),
      ].join('\n'),
      { cause: err },
    );
  }
}

/**
 * kube-apiserver's access to kubelets for `logs`, `exec` and `port-forward`: its client certificate's
 * user bound to the built-in `system:kubelet-api-admin` role, which the kubelet's webhook authorizer asks about.
 */
function apiserverKubeletAccess(): KubernetesObject {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: 'kube-testenv:apiserver-kubelet-client' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:kubelet-api-admin' },
    subjects: [
      { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'kube-apiserver-kubelet-client' },
    ],
  } as KubernetesObject;
}

/**
 * The real node of the control plane in `controlPlaneDir`, started by another process (e.g.
 * `kube-testenv exec --node`), or `undefined` when none is running there.
 */
export async function attachRealNode(controlPlaneDir: string): Promise<RealNode | undefined> {
  const layout = nodeLayout(controlPlaneDir);
  const state = await readNodeState(layout);
  if (!state) return undefined;
  const kubelet = await runningNodeProcess(layout, 'kubelet', state.processes.kubelet?.command ?? 'kubelet');
  return kubelet === undefined ? undefined : new RunningRealNode(layout, state);
}
