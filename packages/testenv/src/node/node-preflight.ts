/**
 * Whether this machine can run a real node, checked in milliseconds and without side effects, so a
 * test file can decide at collection time to skip (with the reason) instead of failing half-way.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, readFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { delimiter, join } from 'node:path';

/** The Debian packages a real node needs from the host; `.ci/run` installs them. */
export const realNodeAptPackages: readonly string[] = ['runc', 'iproute2', 'podman'];

/** The kubelet's port, fixed so that kube-apiserver finds it: one kubelet per host. */
export const kubeletPort = 10250;

/** The executable `name` on `path`, or `undefined`. */
export function findExecutable(name: string, path: string = process.env.PATH ?? ''): string | undefined {
  // runc and ip live in sbin, which a non-login PATH may lack.
  const dirs = [...path.split(delimiter), '/usr/local/sbin', '/usr/sbin', '/sbin'];
  for (const dir of dirs.filter((entry) => entry.length > 0)) {
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {}
  }
  return undefined;
}

/**
 * Why a real node cannot run here, or `undefined` when it can: root, Linux, runc, iproute2, podman
 * (images reach containerd through it), overlayfs, the permission to create namespaces, and a free
 * kubelet port (checked separately by {@link kubeletPortInUse}, which is asynchronous).
 */
export function realNodeUnavailableReason(): string | undefined {
  if (process.platform !== 'linux') return `a real node needs Linux, not ${process.platform}`;
  if (process.getuid?.() !== 0) {
    return 'a real node needs root: the kubelet and containerd manage mounts, cgroups and network namespaces';
  }
  const missing = [
    ['runc', 'runc'],
    ['ip', 'iproute2'],
    ['podman', 'podman'],
  ].filter(([tool]) => findExecutable(tool ?? '') === undefined);
  if (missing.length > 0) {
    return `a real node needs ${missing.map(([tool, pkg]) => `${tool} (apt-get install ${pkg})`).join(', ')}`;
  }
  const filesystems = existsSync('/proc/filesystems') ? readFileSync('/proc/filesystems', 'utf8') : '';
  if (!/\toverlay\n/u.test(filesystems))
    return 'a real node needs overlayfs in the kernel (modprobe overlay)';
  if (!existsSync('/sys/fs/cgroup')) return 'a real node needs cgroups mounted at /sys/fs/cgroup';
  const unshare = findExecutable('unshare');
  if (unshare) {
    const probe = spawnSync(unshare, ['--mount', '--net', '--pid', '--fork', 'true'], { timeout: 10_000 });
    if (probe.status !== 0) {
      return `a real node needs to create namespaces, which this machine refuses (unshare: ${probe.stderr.toString().trim() || `exit ${probe.status}`}); is it an unprivileged container?`;
    }
  }
  return undefined;
}

/** Whether something already listens on the kubelet's port (another kubelet, or another real node). */
export function kubeletPortInUse(): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port: kubeletPort });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
