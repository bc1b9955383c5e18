/**
 * Kernel NFS mounts inside the guest, made as kubelet makes them for a pod: `mount -t nfs4` of a
 * PV's `server:path`, NFSv4.1, hard (the kernel's default: operations wait for a server that is
 * away instead of failing).
 */
import type { Guest } from './guest.ts';

/** Default mount options: NFSv4.1 like current kubelets negotiate with ganesha. */
export const defaultNfsMountOptions = 'vers=4.1';

/** A kernel NFS mount in the guest. */
export interface GuestNfsMount {
  /** Where it is mounted inside the guest. */
  readonly mountPoint: string;
  /** `server:path` that was mounted. */
  readonly source: string;
  /** Unmounts it (lazily with `lazy`, e.g. while a file is still open). */
  unmount(lazy?: boolean): Promise<void>;
}

let mountCount = 0;

/**
 * Mounts `server:path` at `mountPoint` (default a new directory below `/mnt`) with `options`
 * (default `vers=4.1`).
 */
export async function mountNfs(
  guest: Guest,
  source: { readonly server: string; readonly path: string },
  mountPoint: string = `/mnt/nfs-${++mountCount}`,
  options: string = defaultNfsMountOptions,
): Promise<GuestNfsMount> {
  const spec = `${source.server}:${source.path}`;
  const result = await guest.run([
    'sh',
    '-ec',
    'mkdir -p "$1" && mount -t nfs4 -o "$2" "$3" "$1"',
    'mount',
    mountPoint,
    options,
    spec,
  ]);
  if (result.status !== 0) {
    throw new Error(`mount -t nfs4 -o ${options} ${spec} ${mountPoint} failed: ${result.stderr.trim()}`);
  }
  return {
    mountPoint,
    source: spec,
    async unmount(lazy = false) {
      const unmounted = await guest.run(['umount', ...(lazy ? ['-l'] : []), mountPoint]);
      if (unmounted.status !== 0) throw new Error(`umount ${mountPoint} failed: ${unmounted.stderr.trim()}`);
      await guest.run(['rmdir', mountPoint]);
    },
  };
}
