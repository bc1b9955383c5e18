/**
 * One installation serving two exports through a real kernel NFS client: the bundled
 * `nfs-subdir-provisioner` runs inside the test guest with `NFS_EXPORTS` naming two nfs-ganesha
 * exports (two size-limited tmpfs directories on the host), each mounted with `mount -t nfs4`, against
 * the real control plane. Placement reads each export's free space over NFS (statfs of the mount).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { bindClaim, createClaims, deleteClaimAndVolume, waitFor } from '@kube-provisioner/testenv';
import { type GuestNfsDeployment, useTestEnv } from '@kube-provisioner/testenv/testing';
import { CoreV1Api } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { useGuestExampleDeployment } from './example-deployment.ts';

const env = useTestEnv();
const core = env.kubeConfig.makeApiClient(CoreV1Api);
const provisioners = useGuestExampleDeployment(env, 'subdir-exports');
const mib = 1024 * 1024;

/** `deployment`'s export as an `NFS_EXPORTS` entry named `name`, on the mount the guest already has. */
function exportOf(name: string, deployment: GuestNfsDeployment) {
  return {
    name,
    server: deployment.endpoint.address,
    path: deployment.endpoint.exportPath,
    mountRoot: deployment.mount.mountPoint,
  };
}

describe.skipIf(!provisioners.available())(
  'one nfs-subdir-provisioner serving two kernel-mounted exports',
  () => {
    it('places volumes by free space and class, fails a claim no export can hold, and deletes on the right export', async () => {
      // The exports: each deployment brings a server, its route and the guest's mount (its own
      // single-export provisioner serves another provisioner name and stays idle).
      const small = await provisioners.deploy({ exportSizeMiB: 64 });
      const big = await provisioners.deploy({ exportSizeMiB: 256 });
      const both = await provisioners.deploy({
        env: {
          NFS_SERVER: '',
          NFS_PATH: '',
          NFS_EXPORTS: JSON.stringify([exportOf('small', small), exportOf('big', big)]),
        },
      });
      const anywhere = await provisioners.storageClass(both, { onDelete: 'delete' });
      const smallOnly = await provisioners.storageClass(both, { onDelete: 'delete', exports: 'small' });
      const namespace = await env.namespace('exports');
      const claim = (name: string, storageClassName: string) =>
        bindClaim(env.kubeConfig, { namespace, name, storageClassName, storage: '16Mi' });

      // Most free space: big.
      const first = await claim('first', anywhere);
      expect(first.spec?.nfs?.server).toBe(big.endpoint.address);
      const firstDir = await provisioners.reachVolume(big, first);

      // The class names small only.
      const second = await claim('second', smallOnly);
      expect(second.spec?.nfs?.server).toBe(small.endpoint.address);
      await provisioners.reachVolume(small, second);

      // Big filled to less free space than small has: the next volume goes to small.
      await writeFile(join(big.exportDir, firstDir, 'filler'), Buffer.alloc(220 * mib, 1));
      const third = await claim('third', anywhere);
      expect(third.spec?.nfs?.server).toBe(small.endpoint.address);

      // Larger than either export's free space: one event naming both, and no directory anywhere.
      const before = { small: await provisioners.entries(small), big: await provisioners.entries(big) };
      await createClaims(env.kubeConfig, {
        namespace,
        names: ['too-large'],
        storageClassName: anywhere,
        storage: '1Gi',
      });
      const fieldSelector = 'involvedObject.name=too-large,reason=ProvisioningFailed';
      const [event] = await waitFor(
        async () => {
          const { items } = await core.listNamespacedEvent({ namespace, fieldSelector });
          // Not kube-controller-manager's own ("storageclass … not found"), when the claim reaches it first.
          const ours = items.filter((event) => event.source?.component !== 'persistentvolume-controller');
          return ours.length > 0 ? ours : undefined;
        },
        { timeoutMs: 90_000, description: 'a ProvisioningFailed event about too-large' },
      );
      expect(event?.message).toMatch(
        /no export of this class can hold the requested 1073741824 bytes: big has \d+ bytes free, small has \d+ bytes free; no directory was created/u,
      );
      expect({ small: await provisioners.entries(small), big: await provisioners.entries(big) }).toEqual(
        before,
      );

      // Delete finds the export by the PV: first's directory goes from big, small keeps its volumes.
      const smallBefore = await provisioners.entries(small);
      await deleteClaimAndVolume(env.kubeConfig, first);
      expect(await provisioners.entries(big)).not.toContain(firstDir);
      expect(await provisioners.entries(small)).toEqual(smallBefore);
    });

    it("places claims on the other export while one export's server is stopped, and finishes that export's delete once it is back", async () => {
      const roomy = await provisioners.deploy({ exportSizeMiB: 256 });
      const other = await provisioners.deploy({ exportSizeMiB: 64 });
      const both = await provisioners.deploy({
        env: {
          NFS_SERVER: '',
          NFS_PATH: '',
          NFS_EXPORTS: JSON.stringify([exportOf('roomy', roomy), exportOf('other', other)]),
        },
      });
      const className = await provisioners.storageClass(both, { onDelete: 'delete' });
      const namespace = await env.namespace('stopped');
      const claim = (name: string) =>
        bindClaim(env.kubeConfig, { namespace, name, storageClassName: className, storage: '16Mi' });
      const before = await claim('before');
      expect(before.spec?.nfs?.server).toBe(roomy.endpoint.address);
      const beforeDir = await provisioners.reachVolume(roomy, before);

      await roomy.stopServer();
      // Its delete waits for the server; claims meanwhile go to the export that answers.
      await core.deleteNamespacedPersistentVolumeClaim({ namespace, name: 'before' });
      const during = await claim('during');
      expect(during.spec?.nfs?.server).toBe(other.endpoint.address);
      expect(await provisioners.entries(roomy)).toContain(beforeDir);

      await roomy.startServer();
      await waitFor(
        async () =>
          !(await core.listPersistentVolume()).items.some(
            (pv) => pv.metadata?.name === before.metadata?.name,
          ),
        {
          timeoutMs: 120_000,
          description: `PV ${before.metadata?.name} to be deleted once its export is back`,
        },
      );
      expect(await provisioners.entries(roomy)).not.toContain(beforeDir);
      const after = await claim('after');
      expect(after.spec?.nfs?.server).toBe(roomy.endpoint.address);
    });
  },
);
