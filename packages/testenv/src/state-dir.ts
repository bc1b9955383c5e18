import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** The processes of a control plane, in start order. */
export type ComponentName = 'etcd' | 'kube-apiserver' | 'kube-controller-manager' | 'kube-scheduler';

/** Start order; stop in reverse. */
export const componentNames: readonly ComponentName[] = [
  'etcd',
  'kube-apiserver',
  'kube-controller-manager',
  'kube-scheduler',
];

/** How to (re)start one component and tell that it is ready. */
export interface ComponentSpec {
  readonly command: string;
  readonly args: readonly string[];
  /** Health endpoint; `https` ones are served with the control plane's CA-signed certificate. */
  readonly healthUrl: string;
}

/**
 * Everything another process needs to attach to a running control plane: it lives in the state
 * directory as `state.json`, while the pids live in `pids/<component>.pid`.
 */
export interface ControlPlaneState {
  /** Kubernetes release the binaries report. */
  readonly kubernetesVersion: string;
  /** Directory of the binaries, including `kubectl`. */
  readonly binDir: string;
  /** `https://127.0.0.1:<port>` of kube-apiserver. */
  readonly server: string;
  /** `http://127.0.0.1:<port>` of etcd's client endpoint (and its JSON gateway). */
  readonly etcdUrl: string;
  readonly components: Readonly<Record<ComponentName, ComponentSpec>>;
}

/** Paths inside a state directory. */
export interface StateLayout {
  readonly dir: string;
  readonly stateFile: string;
  readonly kubeconfig: string;
  readonly pkiDir: string;
  readonly etcdDataDir: string;
  readonly logsDir: string;
  readonly pidsDir: string;
  readonly schedulerConfig: string;
  /** Where minted ServiceAccount kubeconfigs go. */
  readonly kubeconfigsDir: string;
}

/** The layout of a state directory. */
export function stateLayout(dir: string): StateLayout {
  return {
    dir,
    stateFile: join(dir, 'state.json'),
    kubeconfig: join(dir, 'kubeconfig.yaml'),
    pkiDir: join(dir, 'pki'),
    etcdDataDir: join(dir, 'etcd-data'),
    logsDir: join(dir, 'logs'),
    pidsDir: join(dir, 'pids'),
    schedulerConfig: join(dir, 'kube-scheduler.yaml'),
    kubeconfigsDir: join(dir, 'kubeconfigs'),
  };
}

/** Log file of a component. */
export function logFile(layout: StateLayout, name: ComponentName): string {
  return join(layout.logsDir, `${name}.log`);
}

function pidFile(layout: StateLayout, name: ComponentName): string {
  return join(layout.pidsDir, `${name}.pid`);
}

/** Writes a file so that concurrent readers see either the old or the new content. */
async function writeAtomically(path: string, content: string): Promise<void> {
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, content);
  await rename(temporary, path);
}

/** Persists the state for other processes. */
export async function writeState(layout: StateLayout, state: ControlPlaneState): Promise<void> {
  await writeAtomically(layout.stateFile, `${JSON.stringify(state, null, 2)}\n`);
}

/** Reads the state, or `undefined` when the directory holds no control plane. */
export async function readState(layout: StateLayout): Promise<ControlPlaneState | undefined> {
  try {
    return JSON.parse(await readFile(layout.stateFile, 'utf8')) as ControlPlaneState;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** Records the process group of a running component. */
export async function writePid(layout: StateLayout, name: ComponentName, pid: number): Promise<void> {
  await mkdir(layout.pidsDir, { recursive: true });
  await writeAtomically(pidFile(layout, name), `${pid}\n`);
}

/** The recorded process group of a component, if any. */
export async function readPid(layout: StateLayout, name: ComponentName): Promise<number | undefined> {
  try {
    const pid = Number.parseInt(await readFile(pidFile(layout, name), 'utf8'), 10);
    return Number.isInteger(pid) && pid > 1 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Forgets the process of a component. */
export async function removePid(layout: StateLayout, name: ComponentName): Promise<void> {
  await rm(pidFile(layout, name), { force: true });
}
