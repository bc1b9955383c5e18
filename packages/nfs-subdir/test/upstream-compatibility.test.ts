// biome-ignore-all lint/suspicious/noTemplateCurlyInString: pathPattern placeholders are literal text, not JS templates
/**
 * Volumes laid out and PVs written by the upstream programs (no ownership record, no recorded
 * policy) are deleted or archived exactly as upstream would, once an existing install switches images.
 */
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { V1PersistentVolume, V1StorageClass } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { NfsDialect } from '../src/class-parameters.ts';
import { annOnDelete } from '../src/delete-policy.ts';
import {
  classReader,
  context,
  eventSink,
  nfsProvisioner,
  server,
  storageClass,
  temporaryRoot,
  tree,
} from './fixtures.ts';

const uid = '5f0c2a43-9a7e-4d33-8d3e-1c2b3a4d5e6f';
const pvName = `pvc-${uid}`;

/** A released PV exactly as upstream wrote it: no `nfs.kube-provisioner.io/on-delete`. */
function upstreamPv(path: string, className: string, classInAnnotation: boolean): V1PersistentVolume {
  return {
    metadata: {
      name: pvName,
      annotations: {
        'pv.kubernetes.io/provisioned-by': 'fuseim.pri/ifs',
        ...(classInAnnotation ? { 'volume.beta.kubernetes.io/storage-class': className } : {}),
      },
    },
    spec: {
      capacity: { storage: '1Gi' },
      accessModes: ['ReadWriteMany'],
      persistentVolumeReclaimPolicy: 'Delete',
      nfs: { server, path, readOnly: false },
      claimRef: { namespace: 'team-a', name: 'db', uid },
      ...(classInAnnotation ? {} : { storageClassName: className }),
    },
    status: { phase: 'Released' },
  };
}

async function upstreamDirectory(root: string, relative: string): Promise<void> {
  await mkdir(join(root, relative), { recursive: true });
  await writeFile(join(root, relative, 'data.txt'), 'payload');
}

function classNamed(name: string, parameters?: Record<string, string>): V1StorageClass {
  return storageClass(parameters, { metadata: { name } });
}

describe.each(['nfs-client', 'nfs-subdir'] as const)(
  '%s dialect, upstream <ns>-<pvc>-<pv> layout',
  (dialect: NfsDialect) => {
    const dir = `team-a-db-${pvName}`;

    it.each([
      [undefined, 'archive'],
      [{ archiveOnDelete: 'true' }, 'archive'],
      [{ archiveOnDelete: 'False' }, 'delete'],
    ] as const)('class parameters %j → %s, as upstream', async (parameters, outcome) => {
      await using root = await temporaryRoot();
      await upstreamDirectory(root.path, dir);
      await mkdir(join(root.path, 'team-a-other-pvc-2'));
      const sc = classNamed('managed-nfs-storage', parameters);
      const provisioner = nfsProvisioner(dialect, root.path, { classes: classReader(sc) });

      await provisioner.delete(
        upstreamPv(`/export/${dir}`, 'managed-nfs-storage', dialect === 'nfs-client'),
        context,
      );
      const expected =
        outcome === 'archive' ? [`archived-${dir}`, 'team-a-other-pvc-2'] : ['team-a-other-pvc-2'];
      expect((await readdir(root.path)).sort()).toEqual(expected);
      if (outcome === 'archive') {
        expect(await readFile(join(root.path, `archived-${dir}`, 'data.txt'), 'utf8')).toBe('payload');
      }
    });

    it('succeeds when the directory is already gone', async () => {
      await using root = await temporaryRoot();
      const provisioner = nfsProvisioner(dialect, root.path, {
        classes: classReader(classNamed('nfs-client')),
      });
      await provisioner.delete(upstreamPv(`/export/${dir}`, 'nfs-client', false), context);
      expect(await readdir(root.path)).toEqual([]);
    });

    it('fails with a remedy, touching nothing, when the class it needs is gone', async () => {
      await using root = await temporaryRoot();
      await upstreamDirectory(root.path, dir);
      const before = await tree(root.path);
      const provisioner = nfsProvisioner(dialect, root.path);
      await expect(
        provisioner.delete(upstreamPv(`/export/${dir}`, 'nfs-client', false), context),
      ).rejects.toThrow(
        'the volume records no delete policy (made by an upstream provisioner) and its StorageClass "nfs-client" no longer exists',
      );
      expect(await tree(root.path)).toEqual(before);
    });

    it('archives on an unparsable archiveOnDelete, where upstream failed forever', async () => {
      await using root = await temporaryRoot();
      await upstreamDirectory(root.path, dir);
      const provisioner = nfsProvisioner(dialect, root.path, {
        classes: classReader(classNamed('nfs-client', { archiveOnDelete: 'nope' })),
      });
      await provisioner.delete(upstreamPv(`/export/${dir}`, 'nfs-client', false), context);
      expect(await readdir(root.path)).toEqual([`archived-${dir}`]);
    });
  },
);

describe('nfs-subdir dialect, upstream pathPattern layouts', () => {
  it.each([
    [{ onDelete: 'retain' }, ['data.txt']],
    [{ onDelete: 'Delete' }, undefined],
  ])('applies %j to a nested directory that v4.0.2 never found', async (parameters, kept) => {
    await using root = await temporaryRoot();
    await upstreamDirectory(root.path, 'team-a/db');
    await upstreamDirectory(root.path, 'db');
    const provisioner = nfsProvisioner('nfs-subdir', root.path, {
      classes: classReader(classNamed('nfs-client', parameters)),
    });
    await provisioner.delete(upstreamPv('/export/team-a/db', 'nfs-client', false), context);
    expect(existsSync(join(root.path, 'team-a', 'db'))).toBe(kept !== undefined);
    // The same-named top-level directory v4.0.2 would have hit is untouched, and so is the
    // parent upstream created (it is not ours to remove).
    expect(await readdir(join(root.path, 'db'))).toEqual(['data.txt']);
    expect(existsSync(join(root.path, 'team-a'))).toBe(true);
  });

  it.each([
    { onDelete: 'delete' },
    { archiveOnDelete: 'false' },
    { onDelete: 'Delete', archiveOnDelete: 'false' },
  ])(
    'archives, not deletes, a nested upstream volume whose class %j says delete, as v4.0.2 kept it',
    async (parameters) => {
      await using root = await temporaryRoot();
      await upstreamDirectory(root.path, 'team-a/db');
      const events = eventSink();
      const provisioner = nfsProvisioner('nfs-subdir', root.path, {
        classes: classReader(classNamed('nfs-client', parameters)),
        events,
      });
      await provisioner.delete(upstreamPv('/export/team-a/db', 'nfs-client', false), context);

      expect(await readdir(join(root.path, 'team-a'))).toEqual(['archived-db']);
      expect(await readFile(join(root.path, 'team-a', 'archived-db', 'data.txt'), 'utf8')).toBe('payload');
      expect(events.recorded).toEqual([
        {
          name: pvName,
          type: 'Warning',
          reason: 'VolumeArchivedNotDeleted',
          message: expect.stringContaining(
            'archived team-a/db as team-a/archived-db instead of deleting it: the volume was made by nfs-subdir-external-provisioner with a nested pathPattern, which v4.0.2 never deleted',
          ),
        },
      ]);
      expect(events.recorded[0]?.message).toContain('--delete-unrecorded-nested=true');
    },
  );

  it('deletes a nested upstream volume when the operator opted in', async () => {
    await using root = await temporaryRoot();
    await upstreamDirectory(root.path, 'team-a/db');
    const events = eventSink();
    const provisioner = nfsProvisioner('nfs-subdir', root.path, {
      classes: classReader(classNamed('nfs-client', { onDelete: 'delete' })),
      deleteUnrecordedNested: true,
      events,
    });
    await provisioner.delete(upstreamPv('/export/team-a/db', 'nfs-client', false), context);
    expect(await readdir(join(root.path, 'team-a'))).toEqual([]);
    expect(events.recorded).toEqual([]);
  });

  it('deletes a nested upstream volume whose PV the operator annotated with the delete policy', async () => {
    await using root = await temporaryRoot();
    await upstreamDirectory(root.path, 'team-a/db');
    const provisioner = nfsProvisioner('nfs-subdir', root.path, {
      classes: classReader(classNamed('nfs-client', { onDelete: 'delete' })),
    });
    const pv = upstreamPv('/export/team-a/db', 'nfs-client', false);
    const annotated = { ...pv, metadata: { ...pv.metadata, annotations: { [annOnDelete]: 'delete' } } };
    await provisioner.delete(annotated, context);
    expect(await readdir(join(root.path, 'team-a'))).toEqual([]);
  });

  it('archives a nested directory beside itself, keeping the layout', async () => {
    await using root = await temporaryRoot();
    await upstreamDirectory(root.path, 'team-a/db');
    const provisioner = nfsProvisioner('nfs-subdir', root.path, {
      classes: classReader(classNamed('nfs-client')),
    });
    await provisioner.delete(upstreamPv('/export/team-a/db', 'nfs-client', false), context);
    expect(await readdir(join(root.path, 'team-a'))).toEqual(['archived-db']);
  });

  it.each(['/export', '/export/'])(
    'lets a v4.0.2 PV of an empty render (%s, the whole export) go with a Warning, never touching the export',
    async (path) => {
      await using root = await temporaryRoot();
      await upstreamDirectory(root.path, 'team-b-data');
      const before = await tree(root.path);
      const events = eventSink();
      const provisioner = nfsProvisioner('nfs-subdir', root.path, {
        classes: classReader(classNamed('nfs-client', { onDelete: 'delete' })),
        events,
      });
      await provisioner.delete(upstreamPv(path, 'nfs-client', false), context);
      expect(await tree(root.path)).toEqual(before);
      expect(events.recorded).toEqual([
        {
          name: pvName,
          type: 'Warning',
          reason: 'VolumeExportRootKept',
          message:
            "the volume's path is the export /export itself (nfs-subdir-external-provisioner v4.0.2 made such PVs when a pathPattern rendered empty); the export and all it holds are kept, only the PV goes",
        },
      ]);
    },
  );
});
