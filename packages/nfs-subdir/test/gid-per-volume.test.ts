import { readdir, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { annVolumeGid } from '@kube-provisioner/controller/gid-allocator';
import type { V1PersistentVolume } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import {
  claim,
  context,
  failed,
  nfsProvisioner,
  ownerLookup,
  provisioned,
  provisionOptions,
  released,
  storageClass,
  temporaryRoot,
} from './fixtures.ts';

/** A claim of the class {@link storageClass} makes, as the controller passes them together. */
function classClaim() {
  return claim({ storageClassName: 'nfs-client' });
}

/** A provisioner whose PV list is `saved`, which a test changes as the API server would. */
function provisionerOver(root: string, saved: V1PersistentVolume[]) {
  return nfsProvisioner('nfs-subdir', root, { owners: ownerLookup([], saved) });
}

async function directoryOf(root: string, pv: V1PersistentVolume) {
  const stats = await stat(join(root, basename(pv.spec?.nfs?.path ?? '')));
  return { gid: stats.gid, mode: stats.mode & 0o7777 };
}

describe('a class with gidMin/gidMax', () => {
  it('gives each PV its own GID in pv.beta.kubernetes.io/gid and makes it the group of its directory, setgid', async () => {
    await using root = await temporaryRoot();
    const saved: V1PersistentVolume[] = [];
    const provisioner = provisionerOver(root.path, saved);
    const sc = storageClass({ gidMin: '40000', gidMax: '40010' });
    const first = provisioned(await provisioner.provision(provisionOptions(classClaim(), sc), context));
    const second = provisioned(await provisioner.provision(provisionOptions(classClaim(), sc), context));

    expect(first.metadata?.annotations?.[annVolumeGid]).toBe('40000');
    expect(second.metadata?.annotations?.[annVolumeGid]).toBe('40001');
    expect(await directoryOf(root.path, first)).toEqual({ gid: 40000, mode: 0o2777 });
    expect(await directoryOf(root.path, second)).toEqual({ gid: 40001, mode: 0o2777 });
  });

  it('turns allocation on with either parameter, in any case, the other taking its default', async () => {
    await using root = await temporaryRoot();
    const provisioner = provisionerOver(root.path, []);
    const onlyMax = storageClass({ GIDMAX: '2005' });
    const pv = provisioned(await provisioner.provision(provisionOptions(classClaim(), onlyMax), context));
    expect(pv.metadata?.annotations?.[annVolumeGid]).toBe('2000');
  });

  it('skips the GIDs that saved PVs of the class carry, and only those', async () => {
    await using root = await temporaryRoot();
    const saved: V1PersistentVolume[] = [
      {
        metadata: { name: 'pv-taken', annotations: { [annVolumeGid]: '40000' } },
        spec: { storageClassName: 'nfs-client' },
      },
      {
        metadata: { name: 'pv-other', annotations: { [annVolumeGid]: '40001' } },
        spec: { storageClassName: 'other' },
      },
    ];
    const sc = storageClass({ gidMin: '40000', gidMax: '40010' });
    const pv = provisioned(
      await provisionerOver(root.path, saved).provision(provisionOptions(classClaim(), sc), context),
    );
    expect(pv.metadata?.annotations?.[annVolumeGid]).toBe('40001');
  });

  it('fails a bad gidMin/gidMax as infeasible, saying what is accepted, and creates nothing', async () => {
    await using root = await temporaryRoot();
    const provisioner = provisionerOver(root.path, []);
    const tooLow = failed(
      await provisioner.provision(provisionOptions(classClaim(), storageClass({ gidMin: '100' })), context),
      true,
    );
    expect(tooLow.message).toContain(
      'invalid value "100" for parameter "gidMin": a GID from 2000 to 2147483647',
    );
    const reversed = failed(
      await provisioner.provision(
        provisionOptions(classClaim(), storageClass({ gidMin: '3000', gidMax: '2500' })),
        context,
      ),
      true,
    );
    expect(reversed.message).toContain('gidMin 3000 is greater than gidMax 2500');
    expect(await readdir(root.path)).toEqual([]);
  });

  it('fails a claim, creating nothing, when every GID of the range is in use', async () => {
    await using root = await temporaryRoot();
    const saved: V1PersistentVolume[] = [
      {
        metadata: { name: 'pv-taken', annotations: { [annVolumeGid]: '40000' } },
        spec: { storageClassName: 'nfs-client' },
      },
    ];
    const sc = storageClass({ gidMin: '40000', gidMax: '40000' });
    const error = failed(
      await provisionerOver(root.path, saved).provision(provisionOptions(classClaim(), sc), context),
      false,
    );
    expect(error.message).toContain('every GID from 40000 to 40000 of StorageClass "nfs-client" is in use');
    expect(await readdir(root.path)).toEqual([]);
  });

  it('hands a deleted volume’s GID out again once its PV is gone', async () => {
    await using root = await temporaryRoot();
    const saved: V1PersistentVolume[] = [];
    const provisioner = provisionerOver(root.path, saved);
    const sc = storageClass({ gidMin: '40000', gidMax: '40000', onDelete: 'delete' });
    const pv = released(
      provisioned(await provisioner.provision(provisionOptions(classClaim(), sc), context)),
      sc,
    );
    saved.push(pv);
    await provisioner.delete(pv, context);
    const whilePvExists = failed(
      await provisioner.provision(provisionOptions(classClaim(), sc), context),
      false,
    );
    expect(whilePvExists.message).toContain('is in use');
    saved.length = 0;
    const next = provisioned(await provisioner.provision(provisionOptions(classClaim(), sc), context));
    expect(next.metadata?.annotations?.[annVolumeGid]).toBe('40000');
  });

  it('after a leader died between making a directory and saving its PV, gives the retried claim a fresh GID and regroups its directory', async () => {
    await using root = await temporaryRoot();
    const saved: V1PersistentVolume[] = [];
    const sc = storageClass({ gidMin: '40000', gidMax: '40010' });
    const orphaned = provisionOptions(classClaim(), sc);
    const lost = provisioned(await provisionerOver(root.path, saved).provision(orphaned, context));
    expect(lost.metadata?.annotations?.[annVolumeGid]).toBe('40000');
    // The old leader is gone before saving: the new one does not know 40000 was handed out.
    const newLeader = provisionerOver(root.path, saved);
    const other = provisioned(await newLeader.provision(provisionOptions(classClaim(), sc), context));
    expect(other.metadata?.annotations?.[annVolumeGid]).toBe('40000');
    saved.push(other);
    const retried = provisioned(await newLeader.provision(orphaned, context));
    expect(retried.metadata?.annotations?.[annVolumeGid]).toBe('40001');
    expect(await directoryOf(root.path, retried)).toEqual({ gid: 40001, mode: 0o2777 });
  });

  it('is refused when the provisioner can read no PVs to allocate from', async () => {
    await using root = await temporaryRoot();
    const sc = storageClass({ gidMin: '40000' });
    const error = failed(
      await nfsProvisioner('nfs-subdir', root.path).provision(provisionOptions(classClaim(), sc), context),
      true,
    );
    expect(error.message).toContain('gidMin/gidMax need GID allocation');
    expect(await readdir(root.path)).toEqual([]);
  });
});

describe('a class without gidMin/gidMax', () => {
  it('makes volumes exactly as before: no GID annotation, group and mode 0777 untouched', async () => {
    await using root = await temporaryRoot();
    const pv = provisioned(
      await provisionerOver(root.path, []).provision(provisionOptions(classClaim()), context),
    );
    expect(pv.metadata?.annotations?.[annVolumeGid]).toBeUndefined();
    expect(await directoryOf(root.path, pv)).toEqual({ gid: (await stat(root.path)).gid, mode: 0o777 });
  });

  it('of the nfs-client dialect refuses gidMin as an unknown parameter, as before', async () => {
    await using root = await temporaryRoot();
    const sc = storageClass({ gidMin: '40000' });
    const provisioner = nfsProvisioner('nfs-client', root.path, { owners: ownerLookup() });
    const error = failed(await provisioner.provision(provisionOptions(classClaim(), sc), context), true);
    expect(error.message).toContain('unknown parameter "gidMin"');
  });
});
