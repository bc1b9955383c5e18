/**
 * Deleting a volume whose file a process of the provisioner's NFS client still holds open: the
 * kernel keeps that file as `.nfs…` and refuses to remove it (`EBUSY`) until it is closed. Delete is
 * then postponed (`VolumeInUseError`: a Normal event, the usual retries), not failed. Here the
 * refusal is injected; `nfs-subdir.kernel-nfs.e2e.test.ts` shows it on a kernel NFS mount.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isVolumeInUseError } from '@kube-provisioner/controller';
import { nodeFsOps } from '@kube-provisioner/safe-fs';
import { describe, expect, it } from 'vitest';
import {
  claim,
  context,
  nfsProvisioner,
  provisioned,
  provisionOptions,
  released,
  storageClass,
  temporaryRoot,
  tree,
} from './fixtures.ts';

const busy = Object.assign(new Error('EBUSY: resource busy or locked'), { code: 'EBUSY', errno: -16 });
const sillyRenamed = '.nfs00000000009fc2c200000001';

describe('deleting a volume with a file held open through the same NFS client', () => {
  it('is postponed with a VolumeInUseError saying why, and done once the file is closed', async () => {
    await using root = await temporaryRoot();
    let held = true;
    const fs = {
      ...nodeFsOps,
      unlink: (path: string | Buffer) =>
        held && path.toString().endsWith(`/${sillyRenamed}`) ? Promise.reject(busy) : nodeFsOps.unlink(path),
    };
    const onDelete = storageClass({ onDelete: 'delete' });
    const provisioner = nfsProvisioner('nfs-subdir', root.path, { fs });
    const pv = provisioned(
      await provisioner.provision(
        provisionOptions(claim({ namespace: 'team-a', name: 'db' }), onDelete),
        context,
      ),
    );
    const volume = `team-a-db-${pv.metadata?.name}`;
    await writeFile(join(root.path, volume, sillyRenamed), 'still open');

    const error = await provisioner.delete(released(pv, onDelete), context).catch((err: unknown) => err);
    expect(isVolumeInUseError(error)).toBe(true);
    expect((error as Error).message).toMatch(
      new RegExp(
        `^unlink "${volume}/${sillyRenamed.replace('.', '\\.')}": .*\\(EBUSY\\): a process using this NFS client still holds the file open`,
        'u',
      ),
    );
    expect(await tree(root.path)).toContain(`${volume}/${sillyRenamed}`);

    held = false;
    await provisioner.delete(released(pv, onDelete), context);
    expect(await tree(root.path)).toEqual([]);
  });

  it('fails as usual for EBUSY on any other name', async () => {
    await using root = await temporaryRoot();
    const fs = { ...nodeFsOps, unlink: () => Promise.reject(busy) };
    const onDelete = storageClass({ onDelete: 'delete' });
    const provisioner = nfsProvisioner('nfs-subdir', root.path, { fs });
    const pv = provisioned(
      await provisioner.provision(
        provisionOptions(claim({ namespace: 'team-a', name: 'db' }), onDelete),
        context,
      ),
    );
    await writeFile(join(root.path, `team-a-db-${pv.metadata?.name}`, 'busy.txt'), 'x');
    const error = await provisioner.delete(released(pv, onDelete), context).catch((err: unknown) => err);
    expect(isVolumeInUseError(error)).toBe(false);
    expect((error as Error).message).toMatch(/^unlink ".*\/busy\.txt": .*\(EBUSY\)$/u);
  });
});
