// biome-ignore-all lint/suspicious/noTemplateCurlyInString: pathPattern placeholders are literal text, not JS templates
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, readlink, stat, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { nodeFsOps, permissionFix } from '@kube-provisioner/safe-fs';
import type { V1StorageClass } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { annArchiveRetention, annOnDelete } from '../src/delete-policy.ts';
import {
  claim,
  classReader,
  context,
  failed,
  nfsProvisioner,
  ownerLookup,
  provisioned,
  provisionOptions,
  released,
  server,
  storageClass,
  temporaryRoot,
  tree,
} from './fixtures.ts';

const nested = storageClass({ pathPattern: '${.PVC.namespace}/${.PVC.name}' });

describe('provisioning', () => {
  it("creates <ns>-<pvc>-<pv> with mode 0777 and returns upstream's PV shape plus the delete policy", async () => {
    await using root = await temporaryRoot();
    const pvc = claim({ namespace: 'team-a', name: 'db' });
    const sc = storageClass(undefined, { reclaimPolicy: 'Retain', mountOptions: ['nfsvers=4.1'] });
    const options = provisionOptions(pvc, sc);
    const pv = provisioned(await nfsProvisioner('nfs-subdir', root.path).provision(options, context));

    const dir = `team-a-db-${options.pvName}`;
    expect((await stat(join(root.path, dir))).mode & 0o7777).toBe(0o777);
    expect(pv).toEqual({
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: options.pvName, annotations: { [annOnDelete]: 'archive' } },
      spec: {
        capacity: { storage: '1Gi' },
        accessModes: ['ReadWriteMany'],
        persistentVolumeReclaimPolicy: 'Retain',
        volumeMode: 'Filesystem',
        mountOptions: ['nfsvers=4.1'],
        nfs: { server, path: `/export/${dir}`, readOnly: false },
      },
    });
  });

  it("creates nested pattern directories with upstream's modes: parents 0755, the volume 0777", async () => {
    await using root = await temporaryRoot();
    const pvc = claim({ namespace: 'team-a', name: 'db', labels: { app: 'pg' } });
    const sc = storageClass({ pathPattern: '${.PVC.namespace}/${.PVC.labels.app}/${.PV.name}' });
    const options = provisionOptions(pvc, sc);
    const pv = provisioned(await nfsProvisioner('nfs-subdir', root.path).provision(options, context));

    expect(pv.spec?.nfs?.path).toBe(`/export/team-a/pg/${options.pvName}`);
    const modes = ['team-a', 'team-a/pg', `team-a/pg/${options.pvName}`].map(async (level) => [
      level,
      (await stat(join(root.path, level))).mode & 0o7777,
    ]);
    expect(await Promise.all(modes)).toEqual([
      ['team-a', 0o755],
      ['team-a/pg', 0o755],
      [`team-a/pg/${options.pvName}`, 0o777],
    ]);
  });

  it('falls back to the default name when the pattern renders empty, leaving the root alone', async () => {
    await using root = await temporaryRoot();
    const modeBefore = (await stat(root.path)).mode;
    const pvc = claim({ namespace: 'team-a', name: 'db' });
    const options = provisionOptions(pvc, storageClass({ pathPattern: '${.PVC.annotations.missing}' }));
    const pv = provisioned(await nfsProvisioner('nfs-subdir', root.path).provision(options, context));

    expect(pv.spec?.nfs?.path).toBe(`/export/team-a-db-${options.pvName}`);
    expect((await stat(root.path)).mode).toBe(modeBefore);
  });

  it.each(['/', '/./', '/.', './/'])(
    'falls back to the default name for a render of only / and . (%j), as the README says',
    async (value) => {
      await using root = await temporaryRoot();
      const pvc = claim({ namespace: 'team-a', name: 'db', annotations: { dir: value } });
      const options = provisionOptions(pvc, storageClass({ pathPattern: '${.PVC.annotations.dir}' }));
      const pv = provisioned(await nfsProvisioner('nfs-subdir', root.path).provision(options, context));

      expect(pv.spec?.nfs?.path).toBe(`/export/team-a-db-${options.pvName}`);
    },
  );

  it('refuses claims with a selector, as upstream', async () => {
    await using root = await temporaryRoot();
    const pvc = claim();
    pvc.spec = { ...pvc.spec, selector: { matchLabels: { tier: 'gold' } } };
    const error = failed(
      await nfsProvisioner('nfs-subdir', root.path).provision(provisionOptions(pvc), context),
      true,
    );
    expect(error.message).toBe('claim Selector is not supported');
    expect(await readdir(root.path)).toEqual([]);
  });

  it('fails invalid class parameters with the accepted values and creates nothing', async () => {
    await using root = await temporaryRoot();
    const options = provisionOptions(claim(), storageClass({ onDelete: 'Delete' }));
    const error = failed(await nfsProvisioner('nfs-subdir', root.path).provision(options, context), true);
    expect(error.message).toContain(
      'invalid value "Delete" for parameter "onDelete": accepted values: delete, retain, archive',
    );
    expect(await readdir(root.path)).toEqual([]);
  });

  it('reports permission refusals as infeasible with errno, the path relative to the share, the mount root and the fix', async () => {
    await using root = await temporaryRoot();
    const denied = Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES', errno: -13 });
    const fs = { ...nodeFsOps, mkdir: () => Promise.reject(denied) };
    const options = provisionOptions(claim({ namespace: 'team-a', name: 'db' }), nested);
    const error = failed(
      await nfsProvisioner('nfs-subdir', root.path, { fs }).provision(options, context),
      true,
    );
    expect(error.message).toBe(
      `mkdir "team-a": permission denied (EACCES) in ${root.path} as uid ${process.getuid?.()}, gid ${process.getgid?.()}; ${permissionFix}`,
    );
    expect(await readdir(root.path)).toEqual([]);
  });

  it('removes what it created when a later step fails', async () => {
    await using root = await temporaryRoot();
    let chmods = 0;
    const broken = Object.assign(new Error('EIO: i/o error'), { code: 'EIO', errno: -5 });
    const fs = {
      ...nodeFsOps,
      // The second chmod is the volume's own, after its parent was created.
      fchmod: (...args: Parameters<typeof nodeFsOps.fchmod>) =>
        ++chmods === 2 ? Promise.reject(broken) : nodeFsOps.fchmod(...args),
    };
    const options = provisionOptions(claim(), nested);
    failed(await nfsProvisioner('nfs-subdir', root.path, { fs }).provision(options, context), false);
    expect(await tree(root.path)).toEqual([]);
  });
});

describe('existing directories', () => {
  it('refuses a directory it did not create, and reuses its own on a retried provision', async () => {
    await using root = await temporaryRoot();
    const provisioner = nfsProvisioner('nfs-subdir', root.path);
    await mkdir(join(root.path, 'team-a', 'db'), { recursive: true });
    await writeFile(join(root.path, 'team-a', 'db', 'payroll.csv'), 'secret');
    const intruder = provisionOptions(claim({ namespace: 'team-a', name: 'db' }), nested);
    const error = failed(await provisioner.provision(intruder, context), false);
    expect(error.message).toContain('already exists without an ownership record; refusing to reuse it');

    const own = provisionOptions(claim({ namespace: 'team-b', name: 'db' }), nested);
    const first = provisioned(await provisioner.provision(own, context));
    expect(provisioned(await provisioner.provision(own, context))).toEqual(first);
  });

  it('refuses a path another claim owns, without naming that claim', async () => {
    await using root = await temporaryRoot();
    const provisioner = nfsProvisioner('nfs-subdir', root.path);
    const shared = storageClass({ pathPattern: 'shared/${.PVC.annotations.dir}', adoptExisting: 'true' });
    const owner = claim({ namespace: 'team-a', name: 'db', annotations: { dir: 'data' } });
    provisioned(await provisioner.provision(provisionOptions(owner, shared), context));

    const other = claim({ namespace: 'team-b', name: 'thief', annotations: { dir: 'data' } });
    const error = failed(await provisioner.provision(provisionOptions(other, shared), context), false);
    expect(error.message).toContain('adoption is limited to data of namespace "team-b"');
    expect(error.message).not.toContain('team-a');
  });

  it("adopts unrecorded data below the claim's own namespace only when the class opts in", async () => {
    await using root = await temporaryRoot();
    const provisioner = nfsProvisioner('nfs-subdir', root.path);
    await mkdir(join(root.path, 'team-a', 'db'), { recursive: true });
    await writeFile(join(root.path, 'team-a', 'db', 'keep.txt'), 'data');
    const adopting = storageClass({ pathPattern: '${.PVC.namespace}/${.PVC.name}', adoptExisting: 'true' });
    const pv = provisioned(
      await provisioner.provision(
        provisionOptions(claim({ namespace: 'team-a', name: 'db' }), adopting),
        context,
      ),
    );
    expect(pv.spec?.nfs?.path).toBe('/export/team-a/db');
    expect(await readdir(join(root.path, 'team-a', 'db'))).toEqual(['keep.txt']);
  });
  it("does not adopt a directory holding an upstream nested volume of another PV, whatever that volume's name", async () => {
    await using root = await temporaryRoot();
    await mkdir(join(root.path, 'ns-l', 'x', 'y'), { recursive: true });
    await writeFile(join(root.path, 'ns-l', 'x', 'y', 'keep.txt'), 'another claim');
    const upstreamNested = {
      metadata: { name: 'pvc-upstream-y' },
      spec: { nfs: { server, path: '/export/ns-l/x/y' } },
    };
    const provisioner = nfsProvisioner('nfs-subdir', root.path, {
      owners: ownerLookup([], [upstreamNested]),
    });
    const adopting = storageClass({ pathPattern: '${.PVC.namespace}/${.PVC.name}', adoptExisting: 'true' });

    const error = failed(
      await provisioner.provision(
        provisionOptions(claim({ namespace: 'ns-l', name: 'x' }), adopting),
        context,
      ),
      true,
    );

    expect(error.message).toContain('holds the directory of another PersistentVolume (/export/ns-l/x/y)');
    expect(await readdir(join(root.path, 'ns-l'))).toEqual(['x']);
  });

  it('does not adopt unrecorded data under a first segment a claim can choose (shared/team-b-db for namespace shared)', async () => {
    await using root = await temporaryRoot();
    const provisioner = nfsProvisioner('nfs-subdir', root.path);
    await mkdir(join(root.path, 'shared', 'team-b-db'), { recursive: true });
    await writeFile(join(root.path, 'shared', 'team-b-db', 'keep.txt'), 'team-b data');
    const fixed = storageClass({ pathPattern: 'shared/${.PVC.annotations.dir}', adoptExisting: 'true' });
    const grab = claim({ namespace: 'shared', name: 'grab', annotations: { dir: 'team-b-db' } });

    const error = failed(await provisioner.provision(provisionOptions(grab, fixed), context), false);

    expect(error.message).toContain('starts with the namespace');
    expect(await readdir(join(root.path, 'shared'))).toEqual(['team-b-db']);
  });
});

describe('reattaching data kept by onDelete retain (nfs-subdir#5)', () => {
  const reattach = storageClass({
    pathPattern: '${.PVC.namespace}-${.PVC.name}',
    onDelete: 'retain',
    adoptExisting: 'true',
  });

  it('hands the directory of a deleted claim to the claim re-created under the same name', async () => {
    await using root = await temporaryRoot();
    const provisioner = nfsProvisioner('nfs-subdir', root.path);
    const first = provisioned(
      await provisioner.provision(
        provisionOptions(claim({ namespace: 'team-a', name: 'db' }), reattach),
        context,
      ),
    );
    await writeFile(join(root.path, 'team-a-db', 'keep.txt'), 'data');
    await provisioner.delete(released(first, reattach), context);

    const again = provisionOptions(claim({ namespace: 'team-a', name: 'db' }), reattach);
    const second = provisioned(await provisioner.provision(again, context));

    expect(second.metadata?.name).not.toBe(first.metadata?.name);
    expect(second.spec?.nfs?.path).toBe('/export/team-a-db');
    expect(await readdir(join(root.path, 'team-a-db'))).toEqual(['keep.txt']);
    // The new PV owns it now and can be retained, and reattached, again.
    await provisioner.delete(released(second, reattach), context);
    const third = provisionOptions(claim({ namespace: 'team-a', name: 'db' }), reattach);
    provisioned(await provisioner.provision(third, context));
  });

  it('refuses retained data to another namespace and to a class without adoptExisting', async () => {
    await using root = await temporaryRoot();
    const provisioner = nfsProvisioner('nfs-subdir', root.path);
    const shared = storageClass({
      pathPattern: 'shared/${.PVC.name}',
      onDelete: 'retain',
      adoptExisting: 'true',
    });
    const { adoptExisting: _, ...withoutAdoption } = shared.parameters ?? {};
    const first = provisioned(
      await provisioner.provision(
        provisionOptions(claim({ namespace: 'team-a', name: 'db' }), shared),
        context,
      ),
    );
    await writeFile(join(root.path, 'shared', 'db', 'payroll.csv'), 'secret');
    await provisioner.delete(released(first, shared), context);

    const thief = provisionOptions(claim({ namespace: 'team-b', name: 'db' }), shared);
    const foreign = failed(await provisioner.provision(thief, context), false);
    const plain = provisionOptions(claim({ namespace: 'team-a', name: 'db' }), storageClass(withoutAdoption));
    const unasked = failed(await provisioner.provision(plain, context), false);

    expect(foreign.message).toContain('adoption is limited to data of namespace "team-b"');
    expect(foreign.message).not.toContain('team-a');
    expect(unasked.message).toContain('refusing to reuse it');
    expect(await readdir(join(root.path, 'shared', 'db'))).toEqual(['payroll.csv']);
  });

  it('lets a retained PV go even when its path is not a directory of this export', async () => {
    await using root = await temporaryRoot();
    const provisioner = nfsProvisioner('nfs-subdir', root.path);
    const pv = provisioned(await provisioner.provision(provisionOptions(claim(), reattach), context));
    const elsewhere = { ...pv, spec: { ...pv.spec, nfs: { server, path: '/export' } } };

    await provisioner.delete(released(elsewhere, reattach), context);

    expect(await readdir(root.path)).toHaveLength(2);
  });
});

describe('delete', () => {
  it.each([
    ['delete', false],
    ['retain', true],
  ] as const)('onDelete %s is recorded on the PV and applied', async (onDelete, kept) => {
    await using root = await temporaryRoot();
    const provisioner = nfsProvisioner('nfs-subdir', root.path);
    const sc = storageClass({ onDelete });
    const pv = provisioned(await provisioner.provision(provisionOptions(claim(), sc), context));
    expect(pv.metadata?.annotations?.[annOnDelete]).toBe(onDelete);
    const volume = join(root.path, basename(pv.spec?.nfs?.path ?? ''));
    expect(existsSync(volume)).toBe(true);
    await provisioner.delete(released(pv, sc), context);
    expect(existsSync(volume)).toBe(kept);
  });

  it('archives by default to archived-<dir>, as nfs-client', async () => {
    await using root = await temporaryRoot();
    const provisioner = nfsProvisioner('nfs-subdir', root.path);
    const options = provisionOptions(claim({ namespace: 'team-a', name: 'db' }));
    const pv = provisioned(await provisioner.provision(options, context));
    await provisioner.delete(released(pv), context);
    expect(await readdir(root.path)).toContain(`archived-team-a-db-${options.pvName}`);
  });

  it('gives an archive the retention recorded on its PV, else the provisioner default, else none', async () => {
    await using root = await temporaryRoot();
    const provisioner = nfsProvisioner('nfs-subdir', root.path, { archiveRetentionMs: 3_600_000 });
    const archivedRecord = async (sc: V1StorageClass, name: string) => {
      const options = provisionOptions(claim({ namespace: 'team-a', name }), sc);
      const pv = provisioned(await provisioner.provision(options, context));
      await provisioner.delete(released(pv, sc), context);
      const text = await readlink(
        join(root.path, `.archived-team-a-${name}-${options.pvName}.kube-provisioner.json`),
      );
      const record = JSON.parse(text) as { archivedAt: string; expiresAt?: string };
      return {
        pv,
        keptMs:
          record.expiresAt === undefined
            ? undefined
            : Date.parse(record.expiresAt) - Date.parse(record.archivedAt),
      };
    };

    const byClass = await archivedRecord(storageClass({ archiveRetention: '720h' }), 'a');
    const byDefault = await archivedRecord(storageClass(), 'b');

    expect(byClass.pv.metadata?.annotations?.[annArchiveRetention]).toBe('720h');
    expect(byClass.keptMs).toBe(720 * 3_600_000);
    expect(byDefault.pv.metadata?.annotations?.[annArchiveRetention]).toBeUndefined();
    expect(byDefault.keptMs).toBe(3_600_000);
    const withoutDefault = nfsProvisioner('nfs-subdir', root.path);
    const options = provisionOptions(claim({ namespace: 'team-a', name: 'd' }));
    const pv = provisioned(await withoutDefault.provision(options, context));
    await withoutDefault.delete(released(pv), context);
    const text = await readlink(
      join(root.path, `.archived-team-a-d-${options.pvName}.kube-provisioner.json`),
    );
    expect(JSON.parse(text)).not.toHaveProperty('expiresAt');
  });

  it('follows the policy recorded at provision time after the class is deleted or edited', async () => {
    await using root = await temporaryRoot();
    const original = storageClass({ onDelete: 'delete' });
    const provisioner = nfsProvisioner('nfs-subdir', root.path, {
      classes: classReader(storageClass({ onDelete: 'retain' })),
    });
    const gone = provisioned(await provisioner.provision(provisionOptions(claim(), original), context));
    const edited = provisioned(await provisioner.provision(provisionOptions(claim(), original), context));
    await provisioner.delete(
      released(gone, storageClass(undefined, { metadata: { name: 'deleted-class' } })),
      context,
    );
    await provisioner.delete(released(edited), context);
    expect(await readdir(root.path)).toEqual([]);
  });

  it('deletes the nested directory named by the PV, not a same-named top-level decoy', async () => {
    await using root = await temporaryRoot();
    const provisioner = nfsProvisioner('nfs-subdir', root.path);
    const sc = storageClass({ pathPattern: '${.PVC.namespace}/${.PVC.name}', onDelete: 'delete' });
    const pv = provisioned(
      await provisioner.provision(provisionOptions(claim({ namespace: 'team-a', name: 'db' }), sc), context),
    );
    const neighbour = provisioned(
      await provisioner.provision(provisionOptions(claim({ namespace: 'team-b', name: 'db' }), sc), context),
    );
    await mkdir(join(root.path, 'db'));
    await writeFile(join(root.path, 'db', 'decoy'), 'keep');

    await provisioner.delete(released(pv, sc), context);
    expect(existsSync(join(root.path, 'team-a'))).toBe(false);
    expect(await readdir(join(root.path, 'db'))).toEqual(['decoy']);
    expect(existsSync(join(root.path, 'team-b', 'db'))).toBe(true);
    expect(neighbour.spec?.nfs?.path).toBe('/export/team-b/db');
  });

  it('keeps a parent shared with another live volume', async () => {
    await using root = await temporaryRoot();
    const provisioner = nfsProvisioner('nfs-subdir', root.path);
    const sc = storageClass({ pathPattern: '${.PVC.namespace}/${.PVC.name}', onDelete: 'delete' });
    const first = provisioned(
      await provisioner.provision(provisionOptions(claim({ name: 'one' }), sc), context),
    );
    provisioned(await provisioner.provision(provisionOptions(claim({ name: 'two' }), sc), context));
    await provisioner.delete(released(first, sc), context);
    expect(await readdir(join(root.path, 'team-a'))).toContain('two');
  });

  it('archives same-named leaves of different claims side by side, never replacing one', async () => {
    await using root = await temporaryRoot();
    const provisioner = nfsProvisioner('nfs-subdir', root.path);
    const sc = storageClass({ pathPattern: '${.PVC.namespace}/data' });
    const archive = async (namespace: string): Promise<string> => {
      const options = provisionOptions(claim({ namespace, name: 'app' }), sc);
      const pv = provisioned(await provisioner.provision(options, context));
      await writeFile(join(root.path, namespace, 'data', 'file'), options.pvName);
      await provisioner.delete(released(pv, sc), context);
      return options.pvName;
    };
    const first = await archive('team-a');
    const recreated = await archive('team-a');
    const other = await archive('team-b');

    expect(first).not.toBe(recreated);
    expect((await readdir(join(root.path, 'team-a'))).filter((name) => !name.startsWith('.')).sort()).toEqual(
      ['archived-data', `archived-data-${recreated}`].sort(),
    );
    expect(await readFile(join(root.path, 'team-a', 'archived-data', 'file'), 'utf8')).toBe(first);
    expect(await readdir(join(root.path, 'team-b'))).toContain('archived-data');
    expect(await readFile(join(root.path, 'team-b', 'archived-data', 'file'), 'utf8')).toBe(other);
  });

  it.each([
    ['/', '/'],
    ['/export', '/export'],
    ['/export/', '/export'],
    ['/export//sub', '/export/sub'],
  ])('finds the created directory again with NFS_PATH %j', async (exportPath, normalised) => {
    await using root = await temporaryRoot();
    const provisioner = nfsProvisioner('nfs-client', root.path, { exportPath });
    const sc = storageClass({ archiveOnDelete: 'false' });
    const options = provisionOptions(claim({ namespace: 'team-a', name: 'db' }), sc);
    const pv = provisioned(await provisioner.provision(options, context));
    const dir = `team-a-db-${options.pvName}`;
    expect(pv.spec?.nfs?.path).toBe(normalised === '/' ? `/${dir}` : `${normalised}/${dir}`);
    await provisioner.delete(released(pv, sc), context);
    expect(await readdir(root.path)).toEqual([]);
  });
});

describe('delete refuses PVs that point elsewhere', () => {
  async function attempt(nfs: {
    server: string;
    path: string;
  }): Promise<{ error: Error; before: string[]; after: string[] }> {
    await using root = await temporaryRoot();
    const provisioner = nfsProvisioner('nfs-subdir', root.path);
    const sc = storageClass({ onDelete: 'delete' });
    const pv = provisioned(
      await provisioner.provision(provisionOptions(claim({ namespace: 'team-a', name: 'db' }), sc), context),
    );
    await mkdir(join(root.path, 'etc'));
    const before = await tree(root.path);
    const forged = released({ ...pv, spec: { ...pv.spec, nfs: { ...nfs, readOnly: false } } }, sc);
    const error = await provisioner.delete(forged, context).then(
      () => new Error('delete succeeded'),
      (err: Error) => err,
    );
    return { error, before, after: await tree(root.path) };
  }

  it.each([
    [{ server, path: '/export/../etc' }, 'it has a ".." segment'],
    [{ server, path: '/exports/etc' }, 'it is not below /export'],
    [{ server, path: '/export//etc' }, 'it has an empty segment'],
    [
      { server: 'other.example.com', path: '/export/etc' },
      'not "nfs.example.com"; refusing to touch anything',
    ],
  ])('%j: fails naming the reason and touches nothing', async (nfs, reason) => {
    const { error, before, after } = await attempt(nfs);
    expect(error.message).toContain(reason);
    expect(after).toEqual(before);
  });

  it('refuses a PV whose directory is recorded for another PV', async () => {
    await using root = await temporaryRoot();
    const provisioner = nfsProvisioner('nfs-subdir', root.path);
    const sc = storageClass({ onDelete: 'delete' });
    const victim = provisioned(await provisioner.provision(provisionOptions(claim(), sc), context));
    const forged = released({ ...victim, metadata: { ...victim.metadata, name: 'pvc-forged' } }, sc);
    const before = await tree(root.path);
    await expect(provisioner.delete(forged, context)).rejects.toThrow(
      /recorded for another PV, not pvc-forged/u,
    );
    expect(await tree(root.path)).toEqual(before);
  });
});
