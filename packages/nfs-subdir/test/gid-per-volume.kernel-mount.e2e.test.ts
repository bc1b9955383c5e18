/**
 * Non-root writers on a GID-per-volume class, through a real kernel NFS client: the bundled
 * `nfs-subdir-provisioner` runs inside the test guest (User-Mode Linux) on a `mount -t nfs4` of a
 * nfs-ganesha export, against the real control plane. This host's kernel has no NFS client, so no pod
 * of the real node can mount the volume; the writers are processes in the guest with the identity
 * kubelet gives a pod with `runAsUser: 1000` and no `fsGroup`: user 1000 plus the PV's
 * `pv.beta.kubernetes.io/gid` as a supplemental group.
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { annVolumeGid } from '@kube-provisioner/controller/gid-allocator';
import { bindClaim, deleteClaimAndVolume } from '@kube-provisioner/testenv';
import { useTestEnv } from '@kube-provisioner/testenv/testing';
import { describe, expect, it } from 'vitest';
import { useGuestExampleDeployment } from './example-deployment.ts';

const env = useTestEnv();
const provisioners = useGuestExampleDeployment(env, 'subdir-gid');
const { guest } = provisioners;

/** Runs `script` in the guest as `uid` (its own group too) with `gid` as supplemental group, umask 002. */
async function runAs(uid: number, gid: string, script: string, ...args: string[]): Promise<string> {
  const argv = [
    'setpriv',
    `--reuid=${uid}`,
    `--regid=${uid}`,
    `--groups=${gid}`,
    'sh',
    '-ec',
    `umask 002; ${script}`,
  ];
  const result = await (await guest()).run([...argv, 'writer', ...args]);
  if (result.status !== 0) throw new Error(`as uid ${uid}: ${result.stderr}`);
  return result.stdout;
}

describe.skipIf(!provisioners.available())('a gidMin/gidMax class on a kernel NFS mount', () => {
  it('lets non-root writers of the volume GID share its files, one GID per volume, the GID free again after delete', async () => {
    const deployment = await provisioners.deploy();
    const className = await provisioners.storageClass(deployment, {
      gidMin: '40000',
      gidMax: '40009',
      onDelete: 'delete',
    });
    const namespace = await env.namespace('gid');
    const pv = await bindClaim(env.kubeConfig, { namespace, name: 'data', storageClassName: className });
    const gid = pv.metadata?.annotations?.[annVolumeGid] ?? '';
    expect(gid).toBe('40000');
    const relative = await provisioners.reachVolume(deployment, pv);
    const volume = await stat(join(deployment.exportDir, relative));
    expect({ gid: volume.gid, mode: volume.mode & 0o7777 }).toEqual({ gid: 40000, mode: 0o2777 });

    const mount = await provisioners.mountVolume(deployment, pv);
    try {
      await runAs(1000, gid, 'echo from-1000 > "$1/shared.txt"; mkdir "$1/made-by-1000"', mount.mountPoint);
      // Another user holding only the volume GID edits the file user 1000 made.
      await runAs(1001, gid, 'echo from-1001 >> "$1/shared.txt"', mount.mountPoint);
      expect(await runAs(1001, gid, 'cat "$1/shared.txt"', mount.mountPoint)).toBe('from-1000\nfrom-1001\n');
    } finally {
      await mount.unmount();
    }
    const file = await stat(join(deployment.exportDir, relative, 'shared.txt'));
    expect({ uid: file.uid, gid: file.gid }).toEqual({ uid: 1000, gid: 40000 });
    const made = await stat(join(deployment.exportDir, relative, 'made-by-1000'));
    expect({ gid: made.gid, setgid: (made.mode & 0o2000) !== 0 }).toEqual({ gid: 40000, setgid: true });

    const second = await bindClaim(env.kubeConfig, {
      namespace,
      name: 'second',
      storageClassName: className,
    });
    expect(second.metadata?.annotations?.[annVolumeGid]).toBe('40001');
    await deleteClaimAndVolume(env.kubeConfig, pv);
    const third = await bindClaim(env.kubeConfig, {
      namespace,
      name: 'third',
      storageClassName: className,
    });
    expect(third.metadata?.annotations?.[annVolumeGid]).toBe('40000');
  });
});
