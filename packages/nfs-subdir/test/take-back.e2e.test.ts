/**
 * End-to-end: a claim takes back the data of an archived volume through the
 * `nfs.kube-provisioner.io/take-back-from` annotation, with the `nfs-subdir-provisioner` bin under the
 * example RBAC against the real control plane and a real NFS server; a claim of another namespace,
 * and a second claim of the same one, are refused with an event.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, posix } from 'node:path';
import {
  bindClaim,
  createClaims,
  deleteClaimAndVolume,
  readNfsFile,
  waitFor,
} from '@kube-provisioner/testenv';
import { nfsToolsAvailable, reachVolumeOverNfs, useTestEnv } from '@kube-provisioner/testenv/testing';
import { CoreV1Api, type CoreV1Event } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { annTakeBackFrom } from '../src/take-back-request.ts';
import { useExampleDeployment } from './example-deployment.ts';

const env = useTestEnv();
const provisioners = useExampleDeployment(env, 'nfs-takeback');

/** The first Event with `reason` about claim `name` of `namespace`, once there is one. */
function eventAbout(namespace: string, name: string, reason: string): Promise<CoreV1Event> {
  const core = env.kubeConfig.makeApiClient(CoreV1Api);
  const fieldSelector = `involvedObject.name=${name},reason=${reason}`;
  return waitFor(async () => (await core.listNamespacedEvent({ namespace, fieldSelector })).items[0], {
    timeoutMs: 60_000,
    description: `a ${reason} event about ${namespace}/${name}`,
  });
}

describe.skipIf(!nfsToolsAvailable())('taking archived data back with nfs-subdir-provisioner', () => {
  it('moves the archive into the new claim of the same namespace and refuses every other claim', async () => {
    const deployment = await provisioners.deploy('/export');
    const storageClassName = await provisioners.storageClass(deployment, { archiveOnDelete: 'true' });
    const namespace = await env.namespace('takeback');
    const old = await bindClaim(env.kubeConfig, { namespace, name: 'data', storageClassName });
    const relative = await reachVolumeOverNfs(deployment.server, old);
    const oldPv = old.metadata?.name ?? '';
    await deleteClaimAndVolume(env.kubeConfig, old);
    expect(existsSync(join(deployment.server.exportDir, `archived-${relative}`))).toBe(true);
    const annotations = { [annTakeBackFrom]: oldPv };

    // Another namespace first: refused, and the archive stays where it is.
    const stranger = await env.namespace('takeback');
    await createClaims(env.kubeConfig, {
      namespace: stranger,
      names: ['data'],
      storageClassName,
      annotations,
    });
    const refusal = await eventAbout(stranger, 'data', 'ProvisioningFailed');
    expect(refusal.message).toContain('belongs to another namespace');
    expect(existsSync(join(deployment.server.exportDir, `archived-${relative}`))).toBe(true);

    const taken = await bindClaim(env.kubeConfig, {
      namespace,
      name: 'again',
      storageClassName,
      annotations,
    });

    const newRelative = posix.relative(deployment.server.exportPath, taken.spec?.nfs?.path ?? '');
    expect(newRelative).toBe(`${namespace}-again-${taken.metadata?.name}`);
    expect(await readFile(join(deployment.server.exportDir, newRelative, 'probe.txt'), 'utf8')).toBe(
      `probe for ${oldPv}\n`,
    );
    // The workload reads it over NFS through the new PV.
    const location = deployment.server.location(posix.join(taken.spec?.nfs?.path ?? '', 'probe.txt'));
    expect(await readNfsFile(location)).toBe(`probe for ${oldPv}\n`);
    expect(existsSync(join(deployment.server.exportDir, `archived-${relative}`))).toBe(false);
    expect((await eventAbout(namespace, 'again', 'VolumeTakenBack')).message).toContain(oldPv);

    await createClaims(env.kubeConfig, { namespace, names: ['third'], storageClassName, annotations });
    expect((await eventAbout(namespace, 'third', 'ProvisioningFailed')).message).toContain(
      `the data of ${oldPv} is taken back by another claim`,
    );
  });
});
