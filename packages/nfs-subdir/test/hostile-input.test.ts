// biome-ignore-all lint/suspicious/noTemplateCurlyInString: pathPattern placeholders are literal text, not JS templates
import { existsSync } from 'node:fs';
import { lstat, mkdir, readdir, readFile, rmdir, symlink, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  claim,
  context,
  failed,
  nfsProvisioner,
  provisioned,
  provisionOptions,
  released,
  storageClass,
  temporaryRoot,
  tree,
} from './fixtures.ts';

const byAnnotation = storageClass({ pathPattern: '${.PVC.namespace}/${.PVC.annotations.path}' });

describe('path traversal through claim metadata', () => {
  it.each([
    ['..', '".." segment'],
    ['../../x', '".." segment'],
    ['a/../../b', '".." segment'],
    // local-path's bypass: a prefix that looks right, then a climb into another claim's directory.
    ['db/../../team-b/db', '".." segment'],
    ['x\\..\\..', 'backslash'],
    ['a\u0000b', 'NUL'],
  ])('refuses annotation %j with a ProvisioningFailed reason and creates nothing', async (value, reason) => {
    await using root = await temporaryRoot();
    await mkdir(join(root.path, 'team-b', 'db'), { recursive: true });
    const before = await tree(root.path);
    const pvc = claim({ namespace: 'team-a', name: 'db', annotations: { path: value } });
    const error = failed(
      await nfsProvisioner('nfs-subdir', root.path).provision(provisionOptions(pvc, byAnnotation), context),
      true,
    );
    expect(error.message).toContain('parameter "pathPattern" does not give a usable directory');
    expect(error.message).toContain(reason);
    expect(await tree(root.path)).toEqual(before);
  });

  it.each([
    ['data/', 'team-a/data'],
    ['./x', 'team-a/x'],
    ['a//b', 'team-a/a/b'],
    ['/etc', 'team-a/etc'],
    ['', 'team-a'],
  ])('normalises annotation %j to %s as upstream, inside the namespace', async (value, expected) => {
    await using root = await temporaryRoot();
    const pvc = claim({ namespace: 'team-a', name: 'db', annotations: { path: value } });
    const pv = provisioned(
      await nfsProvisioner('nfs-subdir', root.path).provision(provisionOptions(pvc, byAnnotation), context),
    );
    expect(pv.spec?.nfs?.path).toBe(`/export/${expected}`);
    expect(existsSync(join(root.path, expected))).toBe(true);
  });

  it('creates <ns> for the upstream README class when the claim lacks its annotation, as upstream', async () => {
    await using root = await temporaryRoot();
    const sc = storageClass({ pathPattern: '${.PVC.namespace}/${.PVC.annotations.nfs.io/storage-path}' });
    const pvc = claim({ namespace: 'team-a', name: 'db' });
    const pv = provisioned(
      await nfsProvisioner('nfs-subdir', root.path).provision(provisionOptions(pvc, sc), context),
    );
    expect(pv.spec?.nfs?.path).toBe('/export/team-a');
  });

  it('refuses an annotation-only pattern rendering absolute, rather than joining it under the export', async () => {
    await using root = await temporaryRoot();
    const pvc = claim({ annotations: { 'nfs.io/storage-path': '/etc' } });
    const sc = storageClass({ pathPattern: '${.PVC.annotations.nfs.io/storage-path}' });
    const error = failed(
      await nfsProvisioner('nfs-subdir', root.path).provision(provisionOptions(pvc, sc), context),
      true,
    );
    expect(error.message).toContain('it is absolute');
    expect(await readdir(root.path)).toEqual([]);
  });
});

describe('symlinks planted in the export', () => {
  it('refuses to create through a symlinked parent and writes nothing outside', async () => {
    await using root = await temporaryRoot();
    await using outside = await temporaryRoot();
    await symlink(outside.path, join(root.path, 'team-a'));
    const pvc = claim({ namespace: 'team-a', annotations: { path: 'data' } });
    const error = failed(
      await nfsProvisioner('nfs-subdir', root.path).provision(provisionOptions(pvc, byAnnotation), context),
      false,
    );
    expect(error.message).toContain('symbolic link');
    expect(await readdir(outside.path)).toEqual([]);
  });

  it('deletes a volume containing a link to / by removing the link only', async () => {
    await using root = await temporaryRoot();
    await using outside = await temporaryRoot();
    await writeFile(join(outside.path, 'precious'), 'keep');
    const provisioner = nfsProvisioner('nfs-subdir', root.path);
    const sc = storageClass({ onDelete: 'delete' });
    const pv = provisioned(await provisioner.provision(provisionOptions(claim(), sc), context));
    const volume = join(root.path, basename(pv.spec?.nfs?.path ?? ''));
    await symlink('/', join(volume, 'root'));
    await symlink(outside.path, join(volume, 'outside'));
    await provisioner.delete(released(pv, sc), context);
    expect(await readdir(root.path)).toEqual([]);
    expect(await readFile(join(outside.path, 'precious'), 'utf8')).toBe('keep');
  });

  it('refuses to delete or archive through a volume replaced by a link', async () => {
    await using root = await temporaryRoot();
    await using outside = await temporaryRoot();
    await writeFile(join(outside.path, 'precious'), 'keep');
    const provisioner = nfsProvisioner('nfs-subdir', root.path);
    for (const onDelete of ['delete', 'archive']) {
      const sc = storageClass({ onDelete, pathPattern: '${.PVC.namespace}/${.PVC.name}' });
      const pvc = claim({ namespace: 'team-a', name: `db-${onDelete}` });
      const pv = provisioned(await provisioner.provision(provisionOptions(pvc, sc), context));
      const volume = join(root.path, 'team-a', `db-${onDelete}`);
      await rmdir(volume);
      await symlink(outside.path, volume);
      await expect(provisioner.delete(released(pv, sc), context)).rejects.toThrow(
        /symbolic link|not a directory/u,
      );
      expect((await lstat(volume)).isSymbolicLink()).toBe(true);
    }
    expect(await readdir(outside.path)).toEqual(['precious']);
  });
});

describe('foreign directories', () => {
  it("never reuses or deletes another claim's directory through a colliding pattern", async () => {
    await using root = await temporaryRoot();
    const provisioner = nfsProvisioner('nfs-subdir', root.path);
    // No namespace in the pattern: two tenants can render the same path.
    const sc = storageClass({ pathPattern: '${.PVC.name}', onDelete: 'delete' });
    const owner = provisioned(
      await provisioner.provision(provisionOptions(claim({ namespace: 'team-a', name: 'db' }), sc), context),
    );
    await writeFile(join(root.path, 'db', 'secret'), 'team-a');
    failed(
      await provisioner.provision(provisionOptions(claim({ namespace: 'team-b', name: 'db' }), sc), context),
      false,
    );
    expect(await readFile(join(root.path, 'db', 'secret'), 'utf8')).toBe('team-a');
    expect(existsSync(join(root.path, 'db'))).toBe(true);
    expect(owner.spec?.nfs?.path).toBe('/export/db');
  });
});
