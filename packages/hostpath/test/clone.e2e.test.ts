/**
 * End-to-end: the `kube-hostpath-provisioner` binary under the shipped RBAC clones a claim into a new
 * claim of the same class, files, hard links and modes alike, and frees the source afterwards; a
 * source whose directory is not under its root is refused with an event saying so.
 */
import { chmod, link, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { finalizerCloningProtection } from '@kube-provisioner/controller/clone';
import { treeSnapshot } from '@kube-provisioner/safe-fs/testing';
import { waitFor } from '@kube-provisioner/testenv';
import { useTestEnv } from '@kube-provisioner/testenv/testing';
import { CoreV1Api } from '@kubernetes/client-node';
import { expect, it } from 'vitest';
import { useSharedCli } from './shared-cli.ts';

const env = useTestEnv();
const core = env.kubeConfig.makeApiClient(CoreV1Api);
const startCli = useSharedCli(env);
const timeoutMs = 60_000;
const fromSource = (name: string) => ({ dataSource: { kind: 'PersistentVolumeClaim', name } });

it('clones a claim’s tree into a Bound claim and frees the source; refuses a source outside its root', {
  timeout: 3 * timeoutMs,
}, async () => {
  const { namespace, className, provisionerName, program, bindClaim, createClaim } = await startCli({
    prefix: 'clone',
    timeoutMs,
  });
  // A PV claiming to be this provisioner's, pointing outside its root, bound by hand meanwhile.
  const foreign = `${namespace}-foreign`;
  await core.createPersistentVolume({
    body: {
      metadata: { name: foreign, annotations: { 'pv.kubernetes.io/provisioned-by': provisionerName } },
      spec: {
        storageClassName: className,
        capacity: { storage: '1Mi' },
        accessModes: ['ReadWriteOnce'],
        persistentVolumeReclaimPolicy: 'Retain',
        hostPath: { path: '/var/lib/elsewhere' },
      },
    },
  });
  try {
    await core.createNamespacedPersistentVolumeClaim({
      namespace,
      body: {
        metadata: { name: 'outside' },
        spec: {
          storageClassName: className,
          volumeName: foreign,
          accessModes: ['ReadWriteOnce'],
          resources: { requests: { storage: '1Mi' } },
        },
      },
    });
    const source = await bindClaim('src', '1Mi');
    const sourceDir = source.spec?.hostPath?.path ?? '';
    await mkdir(join(sourceDir, 'sub'));
    await writeFile(join(sourceDir, 'sub/a.txt'), 'alpha');
    await link(join(sourceDir, 'sub/a.txt'), join(sourceDir, 'hard'));
    await chmod(join(sourceDir, 'sub'), 0o750);

    const copy = await bindClaim('copy', '2Mi', fromSource('src'));

    expect(await treeSnapshot(copy.spec?.hostPath?.path ?? '')).toEqual(await treeSnapshot(sourceDir));
    const sourceClaim = await core.readNamespacedPersistentVolumeClaim({ namespace, name: 'src' });
    expect(sourceClaim.metadata?.finalizers ?? []).not.toContain(finalizerCloningProtection);

    await waitFor(
      async () =>
        (await core.readNamespacedPersistentVolumeClaim({ namespace, name: 'outside' })).status?.phase ===
          'Bound' || undefined,
      { timeoutMs, description: 'the foreign source to be bound' },
    );
    await createClaim('copy-outside', '1Mi', fromSource('outside'));
    const refusal = await waitFor(
      async () =>
        (
          await core.listNamespacedEvent({
            namespace,
            fieldSelector: 'involvedObject.name=copy-outside,reason=ProvisioningFailed',
          })
        ).items[0],
      { timeoutMs, description: 'the clone of a source outside the root to be refused' },
    );
    expect(refusal.message).toContain(`the source volume ${foreign} is not a directory under`);
  } finally {
    await core.deletePersistentVolume({ name: foreign });
  }
  expect(program.output()).not.toMatch(/forbidden|"statusCode":403/i);
});
