/**
 * What a real node changes outside its state directory, recorded before it starts and undone when it
 * stops (or when a later start cleans up after a crashed one):
 * - sysctls: the kubelet sets `vm.overcommit_memory`, `vm.panic_on_oom`, `kernel.panic`,
 *   `kernel.panic_on_oops` and `kernel.keys.root_max*`; the CNI bridge plugin `net.ipv4.ip_forward`;
 * - fixed paths whatever their configuration: the kubelet's device-plugin socket under
 *   `/var/lib/kubelet`, its `/var/log/containers` links, libcni's result cache under `/var/lib/cni`,
 *   and the node's own shim socket directory;
 * - the `k8s.io` cgroup (named after containerd's namespace) in every cgroup v1 hierarchy, which
 *   runc leaves behind empty.
 */
import { lstat, readdir, readFile, readlink, rm, rmdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { cniNetworkName } from './node-config.ts';
import { type NodeLayout, shimSocketDir } from './node-layout.ts';

/** Sysctls under `/proc/sys` that the kubelet or the CNI plugins change. */
export const touchedSysctls: readonly string[] = [
  'vm/overcommit_memory',
  'vm/panic_on_oom',
  'kernel/panic',
  'kernel/panic_on_oops',
  'kernel/keys/root_maxkeys',
  'kernel/keys/root_maxbytes',
  'net/ipv4/ip_forward',
];

/** Host directories the node writes into whatever its configuration says. */
export const fixedHostPaths: readonly string[] = [
  '/var/lib/kubelet',
  '/var/log/containers',
  '/var/log/pods',
  '/var/lib/cni',
  dirname(shimSocketDir),
];

/** The cgroup under which containerd's CRI plugin puts pods when the kubelet names no parent. */
const cgroupParent = 'k8s.io';
const cgroupRoot = '/sys/fs/cgroup';

/** The host as it was before the node started. */
export interface HostSnapshot {
  /** Value of each of {@link touchedSysctls} that could be read. */
  readonly sysctls: Readonly<Record<string, string>>;
  /** Those of {@link fixedHostPaths} that existed. */
  readonly existingPaths: readonly string[];
  /** The cgroup hierarchies (`memory`, `cpu`…) that already had a `k8s.io` cgroup. */
  readonly existingCgroups: readonly string[];
}

const exists = (path: string): Promise<boolean> =>
  lstat(path).then(
    () => true,
    () => false,
  );

/** Records the sysctls and fixed paths the node is going to change. */
export async function snapshotHost(): Promise<HostSnapshot> {
  const sysctls: Record<string, string> = {};
  for (const key of touchedSysctls) {
    const value = await readFile(join('/proc/sys', key), 'utf8').catch(() => undefined);
    if (value !== undefined) sysctls[key] = value.trim();
  }
  const existing = await Promise.all(fixedHostPaths.map(async (path) => ((await exists(path)) ? path : '')));
  const hierarchies = await entries(cgroupRoot);
  const cgroups = await Promise.all(
    hierarchies.map(async (name) => ((await exists(join(cgroupRoot, name, cgroupParent))) ? name : '')),
  );
  return {
    sysctls,
    existingPaths: existing.filter((path) => path !== ''),
    existingCgroups: cgroups.filter((name) => name !== ''),
  };
}

/** Entries of `dir`, or none when it does not exist. */
const entries = (dir: string): Promise<string[]> => readdir(dir).catch(() => []);

/**
 * Puts the host back as {@link snapshotHost} found it: every sysctl to its old value; a fixed path
 * that did not exist is removed with its contents, and one that did loses only what this node put in
 * it. Call once the node's processes and containers are gone.
 */
export async function restoreHost(snapshot: HostSnapshot, layout: NodeLayout): Promise<string[]> {
  const problems: string[] = [];
  for (const [key, value] of Object.entries(snapshot.sysctls)) {
    const path = join('/proc/sys', key);
    const now = (await readFile(path, 'utf8').catch(() => value)).trim();
    if (now !== value) {
      await writeFile(path, `${value}\n`).catch((err: Error) =>
        problems.push(`cannot restore ${key} to ${value}: ${err.message}`),
      );
    }
  }
  for (const path of fixedHostPaths) {
    if (!snapshot.existingPaths.includes(path)) {
      await rm(path, { recursive: true, force: true });
      continue;
    }
    await removeOwnEntries(path, layout);
  }
  for (const hierarchy of await entries(cgroupRoot)) {
    if (snapshot.existingCgroups?.includes(hierarchy)) continue;
    await removeCgroup(join(cgroupRoot, hierarchy, cgroupParent)).catch((err: Error) =>
      problems.push(`cannot remove the cgroup ${hierarchy}/${cgroupParent}: ${err.message}`),
    );
  }
  return problems;
}

/** Removes an empty cgroup and its empty children (a cgroup is removed with rmdir, never rm). */
async function removeCgroup(dir: string): Promise<void> {
  const children = (await readdir(dir, { withFileTypes: true }).catch(() => [])).filter((entry) =>
    entry.isDirectory(),
  );
  for (const child of children) await removeCgroup(join(dir, child.name));
  await rmdir(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENOENT') throw err;
  });
}

/** In a fixed path that existed before, removes what this node (and only it) created. */
async function removeOwnEntries(path: string, layout: NodeLayout): Promise<void> {
  switch (path) {
    case '/var/lib/kubelet':
      // The socket exists only while a kubelet runs; one kubelet runs per host.
      await rm(join(path, 'device-plugins', 'kubelet.sock'), { force: true });
      return;
    case '/var/log/containers':
    case '/var/log/pods':
      for (const name of await entries(path)) {
        const entry = join(path, name);
        const target = await readlink(entry).catch(() => undefined);
        if (target !== undefined && isInside(resolve(path, target), layout.dir))
          await rm(entry, { force: true });
      }
      return;
    case '/var/lib/cni':
      for (const sub of ['results', 'cache/results']) {
        for (const name of await entries(join(path, sub))) {
          // `cni-loopback-…`: containerd's own loopback network, should internal loopback ever be off.
          if (name.startsWith(`${cniNetworkName}-`) || name.startsWith('cni-loopback-')) {
            await rm(join(path, sub, name), { force: true });
          }
        }
      }
      return;
    default:
      await rm(shimSocketDir, { recursive: true, force: true });
  }
}

function isInside(path: string, dir: string): boolean {
  return path === dir || path.startsWith(`${dir}/`);
}
