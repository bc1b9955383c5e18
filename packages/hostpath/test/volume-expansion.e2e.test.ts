/**
 * End-to-end: the `kube-hostpath-provisioner` binary under the shipped RBAC grows a claim of a class
 * with `allowVolumeExpansion: true` on the real control plane (kube-controller-manager's expander
 * leaves such volumes to an external controller). Without enforced sizes the new size is recorded only:
 * the PV and the claim show it.
 */
import { waitFor } from '@kube-provisioner/testenv';
import { useTestEnv } from '@kube-provisioner/testenv/testing';
import { CoreV1Api } from '@kubernetes/client-node';
import { expect, it } from 'vitest';
import { useSharedCli } from './shared-cli.ts';

const env = useTestEnv();
const core = env.kubeConfig.makeApiClient(CoreV1Api);
const startCli = useSharedCli(env);
const timeoutMs = 90_000;

it('records the new size on the PV and the claim when a claim of an expandable class grows', {
  timeout: 2 * timeoutMs,
}, async () => {
  const { namespace, program, bindClaim } = await startCli({
    prefix: 'expand',
    storageClass: { allowVolumeExpansion: true },
    timeoutMs,
  });
  const bound = await bindClaim('data', '1Mi');
  expect(bound.spec?.capacity?.storage).toBe('1Mi');

  await core.patchNamespacedPersistentVolumeClaim({
    namespace,
    name: 'data',
    // The client sends a JSON patch.
    body: [{ op: 'replace', path: '/spec/resources/requests/storage', value: '3Mi' }],
  });

  const resized = await waitFor(
    async () => {
      const claim = await core.readNamespacedPersistentVolumeClaim({ namespace, name: 'data' });
      return claim.status?.capacity?.storage === '3Mi' ? claim : undefined;
    },
    { timeoutMs, description: 'the claim to show 3Mi' },
  );
  const pv = await core.readPersistentVolume({ name: resized.spec?.volumeName ?? '' });
  expect(pv.spec?.capacity?.storage).toBe('3Mi');
  expect(resized.status?.allocatedResourceStatuses ?? {}).toEqual({});
  const reasons = (await core.listNamespacedEvent({ namespace })).items
    .filter((event) => event.involvedObject.uid === resized.metadata?.uid)
    .map((event) => event.reason);
  expect(reasons).toContain('VolumeResizeSuccessful');
  expect(reasons).not.toContain('VolumeResizeFailed');
  expect(program.output()).not.toMatch(/forbidden|"statusCode":403/i);
});
