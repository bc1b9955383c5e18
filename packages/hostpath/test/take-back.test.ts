import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { V1PersistentVolume, V1PersistentVolumeClaim, V1StorageClass } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { HostPathProvisioner } from '../src/hostpath-provisioner.ts';
import { annOnDelete } from '../src/persistent-volume.ts';
import { annTakeBackFrom } from '../src/take-back.ts';
import { FakeQuotas, prjquota } from './fake-quotas.ts';
import {
  claim,
  context,
  failed,
  provisioned,
  provisionOptions,
  released,
  storageClass,
  temporaryRoot,
} from './fixtures.ts';

const retain = storageClass({ onDelete: 'retain' });
const mib = 2 ** 20;

function hostpath(root: string, quotas = new FakeQuotas(), node?: string): HostPathProvisioner {
  return new HostPathProvisioner({
    mode: node === undefined ? 'shared' : 'per-node',
    root,
    nodeName: node,
    projectQuotas: { tool: () => quotas, readMountInfo: async () => prjquota },
  });
}

const dataOf = (pv: V1PersistentVolume) => join(pv.spec?.hostPath?.path ?? '', 'data.txt');

/** Provisions a claim of `sc`, writes a file into its volume, and deletes its PV. */
async function retainedVolume(
  provisioner: HostPathProvisioner,
  sc: V1StorageClass,
  init: Parameters<typeof claim>[0] = {},
): Promise<V1PersistentVolume> {
  const pvc = claim(init);
  const pv = provisioned(await provisioner.provision(provisionOptions(pvc, sc), context));
  await writeFile(dataOf(pv), 'kept');
  await provisioner.delete(released(pv, pvc), context);
  return pv;
}

function takingBack(pv: V1PersistentVolume, init: Parameters<typeof claim>[0] = {}): V1PersistentVolumeClaim {
  return claim({ ...init, annotations: { [annTakeBackFrom]: pv.metadata?.name ?? '' } });
}

describe('take-back of retained data', () => {
  it('keeps the directory of a retain class on delete, and records the policy on the PV', async () => {
    await using root = await temporaryRoot();
    const provisioner = hostpath(root.path);
    const pv = await retainedVolume(provisioner, retain);

    expect(pv.metadata?.annotations?.[annOnDelete]).toBe('retain');
    expect(await readFile(dataOf(pv), 'utf8')).toBe('kept');
  });

  it('gives a claim of the same namespace the retained data', async () => {
    await using root = await temporaryRoot();
    const provisioner = hostpath(root.path);
    const old = await retainedVolume(provisioner, retain);

    const pv = provisioned(await provisioner.provision(provisionOptions(takingBack(old), retain), context));

    expect(await readFile(dataOf(pv), 'utf8')).toBe('kept');
  });

  it('refuses a claim of another namespace unless the class names it', async () => {
    await using root = await temporaryRoot();
    const provisioner = hostpath(root.path);
    const old = await retainedVolume(provisioner, retain);
    const other = takingBack(old, { namespace: 'team-b' });

    const error = failed(await provisioner.provision(provisionOptions(other, retain), context), false);
    expect(error.message).toContain('belongs to another namespace');

    const allowing = storageClass({ onDelete: 'retain', takeBackFromNamespaces: 'team-a' });
    const pv = provisioned(await provisioner.provision(provisionOptions(other, allowing), context));
    expect(await readFile(dataOf(pv), 'utf8')).toBe('kept');
  });

  it('in per-node mode, says the data is not on the selected node', async () => {
    await using root = await temporaryRoot();
    const old = await retainedVolume(hostpath(root.path, new FakeQuotas(), 'node-a'), retain, {
      node: 'node-a',
    });
    await using elsewhere = await temporaryRoot();

    const result = await hostpath(elsewhere.path, new FakeQuotas(), 'node-b').provision(
      provisionOptions(takingBack(old, { node: 'node-b' }), retain),
      context,
    );

    expect(failed(result, false).message).toContain(
      `no retained data of ${old.metadata?.name} is on node node-b: retained data stays on the node that held it`,
    );
  });

  it('in per-node mode, gives the data to a claim selected for the node that holds it', async () => {
    await using root = await temporaryRoot();
    const provisioner = hostpath(root.path, new FakeQuotas(), 'node-a');
    const old = await retainedVolume(provisioner, retain, { node: 'node-a' });

    const pvc = takingBack(old, { node: 'node-a' });
    const pv = provisioned(await provisioner.provision(provisionOptions(pvc, retain), context));

    expect(await readFile(dataOf(pv), 'utf8')).toBe('kept');
  });

  it('refuses another namespace before anything about the data’s size, however the classes differ', async () => {
    await using root = await temporaryRoot();
    const provisioner = hostpath(root.path);
    const old = await retainedVolume(provisioner, retain);
    const enforced = storageClass({ onDelete: 'retain', enforceSize: 'true' });

    const other = takingBack(old, { namespace: 'team-b' });
    const result = await provisioner.provision(provisionOptions(other, enforced), context);

    expect(failed(result, false).message).toContain('belongs to another namespace');
    expect(await readFile(dataOf(old), 'utf8')).toBe('kept');
  });

  it('refuses the data of a PV that still exists, whatever the class enforces', async () => {
    await using root = await temporaryRoot();
    const provisioner = hostpath(root.path);
    const enforced = storageClass({ onDelete: 'retain', enforceSize: 'true' });
    const live = provisioned(await provisioner.provision(provisionOptions(claim(), retain), context));

    const result = await provisioner.provision(provisionOptions(takingBack(live), enforced), context);

    expect(failed(result, false).message).toContain('is still in use by its PV');
  });

  it('keeps the project of an enforced tree and limits it to the new request', async () => {
    await using root = await temporaryRoot();
    const quotas = new FakeQuotas();
    const provisioner = hostpath(root.path, quotas);
    const enforced = storageClass({ onDelete: 'retain', enforceSize: 'true' });
    const old = await retainedVolume(provisioner, enforced, { storage: '10Mi' });
    const projectId = quotas.projects.get(old.spec?.hostPath?.path ?? '');
    expect(quotas.limits.has(projectId ?? 0)).toBe(false);

    const pvc = takingBack(old, { storage: '20Mi' });
    const pv = provisioned(await provisioner.provision(provisionOptions(pvc, enforced), context));

    expect(quotas.projects.get(pv.spec?.hostPath?.path ?? '')).toBe(projectId);
    expect(quotas.limits.get(projectId ?? 0)).toMatchObject({ softBytes: 0, hardBytes: 20 * mib });
  });

  it('refuses to take an enforced tree into a class without enforced sizes, and the reverse', async () => {
    await using root = await temporaryRoot();
    const provisioner = hostpath(root.path);
    const enforced = storageClass({ onDelete: 'retain', enforceSize: 'true' });
    const limited = await retainedVolume(provisioner, enforced);
    const unlimited = await retainedVolume(provisioner, retain);

    const intoUnlimited = await provisioner.provision(provisionOptions(takingBack(limited), retain), context);
    expect(failed(intoUnlimited, true).message).toContain('had its size enforced');
    const intoLimited = await provisioner.provision(
      provisionOptions(takingBack(unlimited), enforced),
      context,
    );
    expect(failed(intoLimited, true).message).toContain('had no enforced size');
  });

  it('refuses an annotation that names no PV', async () => {
    await using root = await temporaryRoot();
    const pvc = claim({ annotations: { [annTakeBackFrom]: 'Not A Name' } });

    const result = await hostpath(root.path).provision(provisionOptions(pvc, retain), context);

    expect(failed(result, true).message).toContain(`annotation ${annTakeBackFrom} must name`);
  });
});
