/**
 * End-to-end: a claim whose `dataSource` is another claim gets a copy of its volume, made in the
 * background by the `nfs-subdir-provisioner` bin under the example RBAC against the real control
 * plane and a real NFS server: a 10 000-file tree with a hard link and a link out of the volume
 * arrives identical, the claim binds as soon as the copy ends (not at the controller's next retry,
 * 15 s or more after the copy started), and the source's cloning-protection finalizer is gone afterwards.
 */
import { link, mkdir, symlink, writeFile } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { finalizerCloningProtection } from '@kube-provisioner/controller/clone';
import { treeSnapshot } from '@kube-provisioner/safe-fs/testing';
import { bindClaim, waitFor } from '@kube-provisioner/testenv';
import { nfsToolsAvailable, useTestEnv } from '@kube-provisioner/testenv/testing';
import { CoreV1Api } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { useExampleDeployment } from './example-deployment.ts';

const env = useTestEnv();
const provisioners = useExampleDeployment(env, 'nfs-clone');

/**
 * How long after its copy ended the clone may take to bind: the provision call the end triggers, the
 * PV's create and the PV controller's bind. Well under the controller's first retry (15 s after the
 * copy started), so a claim left to its back-off fails.
 */
const bindAfterCopyBudgetMs = 5_000;

describe.skipIf(!nfsToolsAvailable())('cloning a claim with nfs-subdir-provisioner', () => {
  it('copies a 10 000-file tree exactly, in the background, and releases the source', async () => {
    const deployment = await provisioners.deploy('/export');
    const storageClassName = await provisioners.storageClass(deployment, { onDelete: 'delete' });
    const namespace = await env.namespace('clone');
    const source = await bindClaim(env.kubeConfig, { namespace, name: 'src', storageClassName });
    const sourceDir = join(
      deployment.server.exportDir,
      posix.relative(deployment.server.exportPath, source.spec?.nfs?.path ?? ''),
    );
    for (let d = 0; d < 100; d++) {
      await mkdir(join(sourceDir, `d${d}`));
      await Promise.all(
        Array.from({ length: 100 }, (_, f) =>
          writeFile(join(sourceDir, `d${d}`, `f${f}`), `file ${d}/${f}\n`),
        ),
      );
    }
    await link(join(sourceDir, 'd0/f0'), join(sourceDir, 'hard'));
    await symlink('/etc', join(sourceDir, 'out'));

    const core = env.kubeConfig.makeApiClient(CoreV1Api);
    await core.createNamespacedPersistentVolumeClaim({
      namespace,
      body: {
        metadata: { name: 'copy' },
        spec: {
          storageClassName,
          accessModes: ['ReadWriteMany'],
          resources: { requests: { storage: '1Gi' } },
          dataSource: { kind: 'PersistentVolumeClaim', name: 'src' },
        },
      },
    });
    // Measured from the provisioner's log line at the copy's end (polled every 100 ms).
    await deployment.program.waitForOutput(/"msg":"clone copy finished"/u, 180_000);
    const copy = await waitFor(
      async () => {
        const claim = await core.readNamespacedPersistentVolumeClaim({ namespace, name: 'copy' });
        return claim.status?.phase === 'Bound' ? claim : undefined;
      },
      {
        timeoutMs: bindAfterCopyBudgetMs,
        intervalMs: 100,
        description: 'the clone to be Bound after its copy',
      },
    );

    const pv = await core.readPersistentVolume({ name: copy.spec?.volumeName ?? '' });
    const copyDir = join(
      deployment.server.exportDir,
      posix.relative(deployment.server.exportPath, pv.spec?.nfs?.path ?? ''),
    );
    expect(Object.keys(await treeSnapshot(copyDir))).toHaveLength(10_102);
    expect(await treeSnapshot(copyDir)).toEqual(await treeSnapshot(sourceDir));
    // In the background: the claim's events show the copy starting (the Go library's ProvisioningInBackground).
    const fieldSelector = 'involvedObject.name=copy,reason=ProvisioningFailed';
    const { items } = await core.listNamespacedEvent({ namespace, fieldSelector });
    expect(items.map((event) => event.message)).toContainEqual(
      expect.stringMatching(new RegExp(`^cloning ${namespace}/src into .*: started$`, 'u')),
    );
    const sourceClaim = await core.readNamespacedPersistentVolumeClaim({ namespace, name: 'src' });
    expect(sourceClaim.metadata?.finalizers ?? []).not.toContain(finalizerCloningProtection);
  });
});
