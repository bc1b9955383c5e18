/**
 * `node.json` in the node's state directory: what another process needs to attach to a running real
 * node, and what its teardown must undo. Written before anything is started, so a start that crashed
 * half-way can still be cleaned up.
 */
import { readFile, rename, writeFile } from 'node:fs/promises';
import type { HostSnapshot } from './host-state.ts';
import type { PodNetwork } from './node-config.ts';
import type { NodeLayout } from './node-layout.ts';
import type { NodeProcessName, NodeProcessSpec } from './node-processes.ts';

/** A real node as recorded in its state directory. */
export interface NodeState {
  /** The Node's name; the kubelet authenticates as `system:node:<name>`. */
  readonly name: string;
  /** The host address the kubelet reports and kube-apiserver dials for `logs` and `exec`. */
  readonly nodeIp: string;
  /** kube-apiserver's URL on loopback. */
  readonly server: string;
  /** The control plane's admin kubeconfig, to remove the Node object when the node stops. */
  readonly adminKubeconfig: string;
  readonly network: PodNetwork;
  /** The `kubernetes` Service's cluster IP, relayed to kube-apiserver for pods. */
  readonly serviceIp: string;
  /** The host's runc, which containerd's shim runs. */
  readonly runc: string;
  /** Directory of the node's binaries. */
  readonly binDir: string;
  readonly processes: Readonly<Partial<Record<NodeProcessName, NodeProcessSpec>>>;
  /** The host before the start, to restore. */
  readonly host: HostSnapshot;
}

/** Persists the node's state for other processes and for teardown. */
export async function writeNodeState(layout: NodeLayout, state: NodeState): Promise<void> {
  const temporary = `${layout.stateFile}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(state, null, 2)}\n`);
  await rename(temporary, layout.stateFile);
}

/** The recorded node, or `undefined` when the directory holds none. */
export async function readNodeState(layout: NodeLayout): Promise<NodeState | undefined> {
  try {
    return JSON.parse(await readFile(layout.stateFile, 'utf8')) as NodeState;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}
