// biome-ignore-all lint/suspicious/noTemplateCurlyInString: pathPattern placeholders are literal text, not JS templates
/**
 * Reattaching data across a migration: directories upstream left behind for a claim, and
 * ownership records that outlived their claim and PV across a rollback to the upstream image.
 */
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  claim,
  context,
  eventSink,
  failed,
  nfsProvisioner,
  ownerLookup,
  provisioned,
  provisionOptions,
  storageClass,
  temporaryRoot,
} from './fixtures.ts';

const flat = { pathPattern: '${.PVC.namespace}-${.PVC.name}' };
const adopting = storageClass({ ...flat, adoptExisting: 'true', adoptAmbiguousNamespacePrefix: 'true' });

async function upstreamDirectory(root: string, relative: string): Promise<void> {
  await mkdir(join(root, relative), { recursive: true });
  await writeFile(join(root, relative, 'keep.txt'), 'data');
}

describe('unrecorded directories of the upstream programs', () => {
  it('adopts the flat ${ns}-${name} directory a re-created claim renders to, and says so in an event', async () => {
    await using root = await temporaryRoot();
    await upstreamDirectory(root.path, 'team-a-db');
    const events = eventSink();
    const provisioner = nfsProvisioner('nfs-subdir', root.path, { events });

    const options = provisionOptions(claim({ namespace: 'team-a', name: 'db' }), adopting);
    const pv = provisioned(await provisioner.provision(options, context));

    expect(pv.spec?.nfs?.path).toBe('/export/team-a-db');
    expect(await readFile(join(root.path, 'team-a-db', 'keep.txt'), 'utf8')).toBe('data');
    expect(events.recorded).toEqual([
      {
        name: 'db',
        type: 'Normal',
        reason: 'VolumeAdopted',
        message:
          'adopted the existing directory team-a-db with its data (StorageClass parameter adoptExisting)',
      },
    ]);
  });

  it('still refuses it without adoptExisting or adoptAmbiguousNamespacePrefix, and for patterns not starting with the namespace', async () => {
    await using root = await temporaryRoot();
    await upstreamDirectory(root.path, 'team-a-db');
    await upstreamDirectory(root.path, 'db');
    const provisioner = nfsProvisioner('nfs-subdir', root.path);
    const pvc = claim({ namespace: 'team-a', name: 'db' });

    const unasked = failed(
      await provisioner.provision(provisionOptions(pvc, storageClass(flat)), context),
      false,
    );
    const byName = storageClass({ pathPattern: '${.PVC.name}', adoptExisting: 'true' });
    const foreign = failed(await provisioner.provision(provisionOptions(pvc, byName), context), false);

    const unambiguous = storageClass({ ...flat, adoptExisting: 'true' });
    const ambiguous = failed(await provisioner.provision(provisionOptions(pvc, unambiguous), context), false);

    expect(unasked.message).toContain('already exists without an ownership record; refusing to reuse it');
    expect(ambiguous.message).toContain('when the class accepts that this prefix is ambiguous');
    expect(foreign.message).toContain('adoption is limited to data of namespace "team-a"');
    expect((await readdir(root.path)).sort()).toEqual(['db', 'team-a-db']);
  });
});

describe('ownership records left behind by a rollback', () => {
  const deleting = storageClass({ ...flat, onDelete: 'delete' });

  /** Ours provisions `team-a/db`; the upstream image, rolled back to, then deletes the directory only. */
  async function provisionedThenRolledBack(root: string, keepDirectory: boolean) {
    const provisioner = nfsProvisioner('nfs-subdir', root, { owners: ownerLookup() });
    provisioned(
      await provisioner.provision(
        provisionOptions(claim({ namespace: 'team-a', name: 'db' }), deleting),
        context,
      ),
    );
    if (keepDirectory) await writeFile(join(root, 'team-a-db', 'keep.txt'), 'data');
    else await rm(join(root, 'team-a-db'), { recursive: true });
    return provisioner;
  }

  it('releases a stale record whose directory is gone and provisions the re-created claim afresh', async () => {
    await using root = await temporaryRoot();
    const provisioner = await provisionedThenRolledBack(root.path, false);

    const again = provisionOptions(claim({ namespace: 'team-a', name: 'db' }), deleting);
    const pv = provisioned(await provisioner.provision(again, context));

    expect(pv.spec?.nfs?.path).toBe('/export/team-a-db');
    expect(await readdir(join(root.path, 'team-a-db'))).toEqual([]);
  });

  it('reattaches kept data under a stale record when the class adopts', async () => {
    await using root = await temporaryRoot();
    const provisioner = await provisionedThenRolledBack(root.path, true);

    const again = provisionOptions(claim({ namespace: 'team-a', name: 'db' }), adopting);
    provisioned(await provisioner.provision(again, context));

    expect(await readFile(join(root.path, 'team-a-db', 'keep.txt'), 'utf8')).toBe('data');
  });

  it('says what blocks kept data under a stale record and how to clear it', async () => {
    await using root = await temporaryRoot();
    const provisioner = await provisionedThenRolledBack(root.path, true);

    const again = provisionOptions(claim({ namespace: 'team-a', name: 'db' }), deleting);
    const error = failed(await provisioner.provision(again, context), false);

    expect(error.message).toBe(
      'team-a-db holds the data of a claim that no longer exists: its ownership record (.<dir>.kube-provisioner.json beside it) outlived that claim and its PV, e.g. across a rollback to the upstream image, and is now marked released; to reattach the data to this claim set the StorageClass parameter adoptExisting: "true" (claims of the namespace that made it only), or move the directory and its record away',
    );
    expect(await readFile(join(root.path, 'team-a-db', 'keep.txt'), 'utf8')).toBe('data');
  });

  it('keeps refusing a record whose claim or PV still exists', async () => {
    await using root = await temporaryRoot();
    const owner = claim({ namespace: 'team-a', name: 'db' });
    const first = provisionOptions(owner, adopting);
    const live = ownerLookup([owner]);
    const provisioner = nfsProvisioner('nfs-subdir', root.path, { owners: live });
    const pv = provisioned(await provisioner.provision(first, context));
    const withPvOnly = nfsProvisioner('nfs-subdir', root.path, { owners: ownerLookup([], [pv]) });

    const rival = provisionOptions(claim({ namespace: 'team-a', name: 'db', uid: 'another-uid' }), adopting);
    for (const candidate of [provisioner, withPvOnly]) {
      const error = failed(await candidate.provision(rival, context), false);
      expect(error.message).toContain('belongs to another claim, which still uses it');
    }
  });
});
