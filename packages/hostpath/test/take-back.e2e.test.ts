/**
 * End-to-end: the `kube-hostpath-provisioner` binary under the shipped RBAC keeps the directory of a
 * deleted claim of a class with `onDelete: retain`, and gives that data to a new claim of the same
 * namespace that asks for it by the old PV's name, telling it so with a `VolumeTakenBack` event; a claim of
 * another namespace is refused.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { waitFor } from '@kube-provisioner/testenv';
import { useTestEnv } from '@kube-provisioner/testenv/testing';
import { CoreV1Api } from '@kubernetes/client-node';
import { expect, it } from 'vitest';
import { annTakeBackFrom } from '../src/take-back.ts';
import { useSharedCli } from './shared-cli.ts';

const env = useTestEnv();
const core = env.kubeConfig.makeApiClient(CoreV1Api);
const startCli = useSharedCli(env);
const timeoutMs = 60_000;

it('reattaches a deleted claim’s retained data to a new claim of its namespace, not of another', {
  timeout: 3 * timeoutMs,
}, async () => {
  const { namespace, program, bindClaim, createClaim } = await startCli({
    prefix: 'take-back',
    storageClass: { parameters: { onDelete: 'retain' } },
    timeoutMs,
  });
  const old = await bindClaim('old', '1Mi');
  const oldName = old.metadata?.name ?? '';
  await writeFile(join(old.spec?.hostPath?.path ?? '', 'data.txt'), 'kept');
  await core.deleteNamespacedPersistentVolumeClaim({ namespace, name: 'old' });
  await waitFor(
    () =>
      core.readPersistentVolume({ name: oldName }).then(
        () => undefined,
        () => true,
      ),
    { timeoutMs, description: `PV ${oldName} to be deleted` },
  );
  const annotations = { [annTakeBackFrom]: oldName };

  const elsewhere = await env.namespace('hostpath-take-back-other');
  await createClaim('thief', '1Mi', { namespace: elsewhere, annotations });
  const refusal = await waitFor(
    async () =>
      (await core.listNamespacedEvent({ namespace: elsewhere })).items.find(
        (event) => event.reason === 'ProvisioningFailed',
      ),
    { timeoutMs, description: 'the claim of another namespace to be refused' },
  );
  expect(refusal.message).toContain('belongs to another namespace');

  const pv = await bindClaim('new', '1Mi', { annotations });
  expect(await readFile(join(pv.spec?.hostPath?.path ?? '', 'data.txt'), 'utf8')).toBe('kept');
  const takenBack = await waitFor(
    async () =>
      (await core.listNamespacedEvent({ namespace })).items.find(
        (event) => event.reason === 'VolumeTakenBack',
      ),
    { timeoutMs, description: 'the VolumeTakenBack event' },
  );
  expect(takenBack).toMatchObject({ type: 'Normal', involvedObject: { name: 'new' } });
  expect(takenBack.message).toContain(oldName);
  expect(program.output()).not.toMatch(/forbidden|"statusCode":403/i);
});
