// biome-ignore-all lint/suspicious/noTemplateCurlyInString: pathPattern placeholders are literal text, not JS templates
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { V1StorageClass } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { type NfsDialect, parseClassParameters } from '../src/class-parameters.ts';
import { annTakeBackFrom } from '../src/take-back-request.ts';
import {
  claim,
  context,
  eventSink,
  failed,
  nfsProvisioner,
  provisioned,
  provisionOptions,
  released,
  storageClass,
  temporaryRoot,
} from './fixtures.ts';

/** Provisions a claim of `namespace`, writes a file into its volume, then deletes its PV as `sc` says. */
async function keptData(dialect: NfsDialect, root: string, sc: V1StorageClass, namespace = 'team-a') {
  const provisioner = nfsProvisioner(dialect, root);
  const pv = provisioned(await provisioner.provision(provisionOptions(claim({ namespace }), sc), context));
  const path = pv.spec?.nfs?.path.replace('/export/', '') ?? '';
  await writeFile(join(root, path, 'file'), 'kept');
  await provisioner.delete(released(pv, sc), context);
  return pv.metadata?.name ?? '';
}

function asking(namespace: string, fromPvName: string) {
  return claim({ namespace, name: 'again', annotations: { [annTakeBackFrom]: fromPvName } });
}

describe('taking data back with the take-back-from annotation', () => {
  it.each<[NfsDialect, Record<string, string>]>([
    ['nfs-client', {}],
    ['nfs-subdir', { onDelete: 'retain' }],
    ['nfs-subdir', { pathPattern: '${.PVC.namespace}/${.PVC.name}', archiveRetention: '720h' }],
  ])('%s %j: the new claim gets the data, moved into its own directory', async (dialect, parameters) => {
    await using root = await temporaryRoot();
    const sc = storageClass(parameters);
    const oldPv = await keptData(dialect, root.path, sc);
    const events = eventSink();

    const pv = provisioned(
      await nfsProvisioner(dialect, root.path, { events }).provision(
        provisionOptions(asking('team-a', oldPv), sc),
        context,
      ),
    );

    const path = pv.spec?.nfs?.path.replace('/export/', '') ?? '';
    expect(await readFile(join(root.path, path, 'file'), 'utf8')).toBe('kept');
    expect(events.recorded).toEqual([
      expect.objectContaining({ reason: 'VolumeTakenBack', message: expect.stringContaining(oldPv) }),
    ]);
    const left = await readdir(root.path, { recursive: true });
    expect(left.filter((entry) => entry.includes(oldPv) || entry.includes('archived-'))).toEqual([]);
  });

  it('refuses a claim of another namespace unless the class names that namespace', async () => {
    await using root = await temporaryRoot();
    const oldPv = await keptData('nfs-subdir', root.path, storageClass(), 'team-a');
    const provisioner = nfsProvisioner('nfs-subdir', root.path);

    const error = failed(
      await provisioner.provision(provisionOptions(asking('team-b', oldPv)), context),
      false,
    );
    expect(error.message).toContain('belongs to another namespace');

    const open = storageClass({ takeBackFromNamespaces: 'team-a, team-c' });
    const pv = provisioned(
      await provisioner.provision(provisionOptions(asking('team-b', oldPv), open), context),
    );
    const path = pv.spec?.nfs?.path.replace('/export/', '') ?? '';
    expect(await readFile(join(root.path, path, 'file'), 'utf8')).toBe('kept');
  });

  it('refuses a second claim asking for data another claim took back', async () => {
    await using root = await temporaryRoot();
    const oldPv = await keptData('nfs-subdir', root.path, storageClass());
    const provisioner = nfsProvisioner('nfs-subdir', root.path);
    provisioned(await provisioner.provision(provisionOptions(asking('team-a', oldPv)), context));

    const error = failed(
      await provisioner.provision(provisionOptions(asking('team-a', oldPv)), context),
      false,
    );

    expect(error.message).toContain(`the data of ${oldPv} is taken back by another claim`);
  });

  it('refuses an annotation that names no PV as infeasible, and a bad class list as invalid', async () => {
    await using root = await temporaryRoot();
    const provisioner = nfsProvisioner('nfs-subdir', root.path);

    const bad = failed(
      await provisioner.provision(provisionOptions(asking('team-a', '../x')), context),
      true,
    );
    const list = failed(
      await provisioner.provision(
        provisionOptions(claim(), storageClass({ takeBackFromNamespaces: 'Team_A' })),
        context,
      ),
      true,
    );

    expect(bad.message).toContain(`annotation ${annTakeBackFrom} must name the PersistentVolume`);
    expect(parseClassParameters('nfs-client', { takeBackFromNamespaces: ' * ' }).takeBackFromNamespaces).toBe(
      '*',
    );
    expect(list.message).toContain('"takeBackFromNamespaces": accepted values: a comma-separated list');
    expect(await readdir(root.path)).toEqual([]);
  });
});
