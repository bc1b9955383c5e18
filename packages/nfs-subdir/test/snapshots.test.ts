// A DirectorySnapshot of an nfs-subdir claim, on real directories as the export: taken into the
// export's snapshot area, restored into a new claim with identical content, its data removed with
// the object (kept with Retain); with several exports, all of it on the source's export.
import { chmod, link, mkdir, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { OperationContext, ProvisionOptions, ProvisionResult } from '@kube-provisioner/controller';
import {
  annSnapshotProvisioner,
  type DirectorySnapshot,
  directorySnapshots,
  snapshotKind,
  snapshotRecordName,
} from '@kube-provisioner/controller/snapshot';
import { eventually, FakeKubeApi } from '@kube-provisioner/controller/testing';
import { type FsOps, nodeFsOps, snapshotPath, VolumeRoot } from '@kube-provisioner/safe-fs';
import { treeSnapshot } from '@kube-provisioner/safe-fs/testing';
import type { V1PersistentVolume, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { snapshotExport } from '../src/export-snapshots.ts';
import { NfsExport } from '../src/nfs-export.ts';
import {
  claim,
  context,
  nfsProvisioner,
  provisioned,
  provisionerName,
  provisionOptions,
  server,
  storageClass,
  temporaryRoot,
} from './fixtures.ts';
import { gi, twoExports } from './several-exports-fixtures.ts';

/** The directory below `root` of an nfs PV of export `/export`. */
const dirOf = (root: string, pv: V1PersistentVolume) =>
  join(root, pv.spec?.nfs?.path.replace('/export/', '') ?? '');

/** Source claim `src` of `team-a`, provisioned on `root` and filled with a small tree. */
async function filledSource(root: string) {
  const src = claim({ namespace: 'team-a', name: 'src', storage: '2Gi' });
  const options = provisionOptions(src, storageClass());
  const pv = provisioned(await nfsProvisioner('nfs-subdir', root).provision(options, context));
  const dir = dirOf(root, pv);
  await mkdir(join(dir, 'sub'));
  await writeFile(join(dir, 'sub', 'a.txt'), 'alpha');
  await writeFile(join(dir, 'b.bin'), Buffer.alloc(70_000, 7));
  await chmod(join(dir, 'b.bin'), 0o640);
  await link(join(dir, 'sub', 'a.txt'), join(dir, 'hard-a'));
  await symlink('sub/a.txt', join(dir, 'to-a'));
  const bound: V1PersistentVolumeClaim = {
    ...src,
    spec: { ...src.spec, volumeName: options.pvName },
    status: { phase: 'Bound' },
  };
  const boundPv: V1PersistentVolume = {
    ...pv,
    metadata: {
      ...pv.metadata,
      annotations: { ...pv.metadata?.annotations, 'pv.kubernetes.io/provisioned-by': provisionerName },
    },
  };
  return { bound, pv: boundPv, dir };
}

/** Calls `provision` until it stops answering Background. */
async function untilFinished(call: () => Promise<ProvisionResult>): Promise<ProvisionResult> {
  for (;;) {
    const result = await call();
    if (!('error' in result) || result.state !== 'Background') return result;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** Snapshot `snap` of claim `src` in `team-a`. */
function snapshotObject(deletionPolicy?: 'Retain'): DirectorySnapshot {
  return {
    metadata: { name: 'snap', namespace: 'team-a' },
    spec: { source: { persistentVolumeClaimName: 'src' }, ...(deletionPolicy && { deletionPolicy }) },
  };
}

/** An nfs-subdir provisioner of one export at `root` taking snapshots of `src`, its term running. */
async function takingSnapshots(root: string, fs?: FsOps, claims: readonly V1PersistentVolumeClaim[] = []) {
  const source = await filledSource(root);
  const api = new FakeKubeApi();
  const snapshots = api.resource(directorySnapshots);
  const provisioner = nfsProvisioner('nfs-subdir', root, {
    fs,
    snapshots: {
      snapshots,
      claims: {
        get: async (name) => claims.find((c) => c.metadata?.name === name) ?? source.bound,
      },
      volumes: { get: async () => source.pv },
    },
  });
  const term = new AbortController();
  const termContext: OperationContext = { ...context, signal: term.signal };
  await provisioner.maintain(termContext);
  const read = () => snapshots.get('snap', { namespace: 'team-a' });
  const ready = async (): Promise<DirectorySnapshot> => {
    await snapshots.create(snapshotObject(), { namespace: 'team-a' });
    return eventually(async () => {
      const snapshot = await read();
      expect(snapshot.status?.readyToUse).toBe(true);
      return snapshot;
    });
  };
  return { api, snapshots, provisioner, source, term, read, ready, [Symbol.dispose]: () => term.abort() };
}

function restoreOptions(name: string): ProvisionOptions {
  return {
    ...provisionOptions(claim({ namespace: 'team-a', name, storage: '2Gi' }), storageClass()),
    dataSource: { ...snapshotKind, name: 'snap', namespace: 'team-a' },
  };
}

describe('DirectorySnapshots of nfs-subdir claims', () => {
  it('takes one into the export’s snapshot area and restores a new claim with identical content', async () => {
    await using root = await temporaryRoot();
    using scene = await takingSnapshots(root.path);
    const expected = await treeSnapshot(scene.source.dir);

    const snapshot = await scene.ready();

    const uid = snapshot.metadata?.uid ?? '';
    expect(snapshot.metadata?.annotations?.[annSnapshotProvisioner]).toBe(provisionerName);
    expect(snapshot.status?.restoreSize).toBe('2Gi');
    expect(await treeSnapshot(join(root.path, snapshotPath('team-a', uid)))).toEqual(expected);
    const record = await new VolumeRoot(root.path).readRecord(snapshotPath('team-a', uid));
    expect(record).toMatchObject({ pvName: snapshotRecordName(uid), provisioner: provisionerName });
    expect(scene.provisioner.dataSources).toContainEqual(snapshotKind);

    const options = restoreOptions('restored');
    const restored = provisioned(await untilFinished(() => scene.provisioner.provision(options, context)));

    expect(restored.spec?.nfs?.path).not.toBe(scene.source.pv.spec?.nfs?.path);
    expect(await treeSnapshot(dirOf(root.path, restored))).toEqual(expected);
    // The source changing later changes neither the snapshot nor the restored claim.
    await writeFile(join(scene.source.dir, 'sub', 'a.txt'), 'changed');
    expect(await treeSnapshot(dirOf(root.path, restored))).toEqual(expected);
    expect(await treeSnapshot(join(root.path, snapshotPath('team-a', uid)))).toEqual(expected);
  });

  it('restores a claim whose copy outlasts the first check that its claim still exists (5 s)', {
    timeout: 30_000,
  }, async () => {
    await using root = await temporaryRoot();
    let slowLinks = false;
    // A slow restore: its copy of the tree's symbolic link waits past the claim check.
    const fs: FsOps = {
      ...nodeFsOps,
      symlink: async (target, path) => {
        if (slowLinks) await new Promise((resolve) => setTimeout(resolve, 5_500));
        return nodeFsOps.symlink(target, path);
      },
    };
    const options = restoreOptions('restored');
    using scene = await takingSnapshots(root.path, fs, [options.pvc]);
    const expected = await treeSnapshot(scene.source.dir);
    await scene.ready();
    slowLinks = true;

    const restored = provisioned(await untilFinished(() => scene.provisioner.provision(options, context)));

    expect(await treeSnapshot(dirOf(root.path, restored))).toEqual(expected);
  });

  it('removes a deleted snapshot’s data, then the object', async () => {
    await using root = await temporaryRoot();
    using scene = await takingSnapshots(root.path);
    const uid = (await scene.ready()).metadata?.uid ?? '';
    const dataDir = join(root.path, snapshotPath('team-a', uid));

    await scene.snapshots.delete('snap', { namespace: 'team-a' });

    await eventually(() => expect(scene.api.objects(directorySnapshots)).toEqual([]));
    await expect(stat(dataDir)).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await treeSnapshot(scene.source.dir)).toMatchObject({ 'sub/a.txt': expect.any(String) });
  });

  it('keeps a deleted snapshot’s data with Retain, recorded as released', async () => {
    await using root = await temporaryRoot();
    using scene = await takingSnapshots(root.path);
    await scene.snapshots.create(snapshotObject('Retain'), { namespace: 'team-a' });
    const snapshot = await eventually(async () => {
      const read = await scene.read();
      expect(read.status?.readyToUse).toBe(true);
      return read;
    });
    const path = snapshotPath('team-a', snapshot.metadata?.uid ?? '');

    await scene.snapshots.delete('snap', { namespace: 'team-a' });

    await eventually(() => expect(scene.api.objects(directorySnapshots)).toEqual([]));
    const record = await new VolumeRoot(root.path).readRecord(path);
    expect(record?.releasedAt).toEqual(expect.any(String));
    expect(await treeSnapshot(join(root.path, path))).toEqual(await treeSnapshot(scene.source.dir));
  });
});

describe('DirectorySnapshots with several exports', () => {
  it('are kept on the source’s export, restored there with identical content, and removed from it', async () => {
    const api = new FakeKubeApi();
    const snapshots = api.resource(directorySnapshots);
    let source: { bound: V1PersistentVolumeClaim; pv: V1PersistentVolume } | undefined;
    const access = {
      snapshots,
      claims: { get: async () => source?.bound ?? claim() },
      volumes: { get: async () => source?.pv ?? {} },
    };
    // Most free space: the source goes to export b.
    const exports = await twoExports({ a: gi, b: 10 * gi }, { snapshots: access });
    await using _dir = exports.dir;
    const src = claim({ namespace: 'team-a', name: 'src', storage: '2Gi' });
    const options = provisionOptions(src, storageClass());
    const pv = provisioned(await exports.provisioner.provision(options, context));
    const exportDir = (volume: V1PersistentVolume) =>
      join(exports.dir.path, volume.spec?.nfs?.path.replace('/srv/', '') ?? '');
    const sourceDir = exportDir(pv);
    expect(sourceDir.startsWith(exports.mount('b'))).toBe(true);
    await mkdir(join(sourceDir, 'sub'));
    await writeFile(join(sourceDir, 'sub', 'a.txt'), 'alpha');
    await link(join(sourceDir, 'sub', 'a.txt'), join(sourceDir, 'hard-a'));
    const expected = await treeSnapshot(sourceDir);
    source = {
      bound: { ...src, spec: { ...src.spec, volumeName: options.pvName }, status: { phase: 'Bound' } },
      pv: {
        ...pv,
        metadata: {
          ...pv.metadata,
          annotations: { ...pv.metadata?.annotations, 'pv.kubernetes.io/provisioned-by': provisionerName },
        },
      },
    };
    const term = new AbortController();
    await exports.provisioner.maintain({ ...context, signal: term.signal });

    await snapshots.create(snapshotObject(), { namespace: 'team-a' });
    const ready = await eventually(async () => {
      const snapshot = await snapshots.get('snap', { namespace: 'team-a' });
      expect(snapshot.status?.readyToUse).toBe(true);
      return snapshot;
    });
    const path = snapshotPath('team-a', ready.metadata?.uid ?? '');
    expect(await treeSnapshot(join(exports.mount('b'), path))).toEqual(expected);
    await expect(stat(join(exports.mount('a'), path))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(exports.provisioner.dataSources).toContainEqual(snapshotKind);

    const restore = restoreOptions('restored');
    const restored = provisioned(await untilFinished(() => exports.provisioner.provision(restore, context)));
    expect(exportDir(restored).startsWith(exports.mount('b'))).toBe(true);
    expect(await treeSnapshot(exportDir(restored))).toEqual(expected);

    await snapshots.delete('snap', { namespace: 'team-a' });
    await eventually(() => expect(api.objects(directorySnapshots)).toEqual([]));
    term.abort();
    await expect(stat(join(exports.mount('b'), path))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await treeSnapshot(exportDir(restored))).toEqual(expected);
  });
});

describe('finding a snapshot among several exports', () => {
  it('finds it past an export that does not answer, and never calls it nowhere while one is silent', async () => {
    await using root = await temporaryRoot();
    const answering = { nfsExport: new NfsExport(server, '/srv/a'), root: new VolumeRoot(root.path) };
    const silentRoot = { base: '/mnt/b', readRecord: () => new Promise<never>(() => {}) };
    const silent = { nfsExport: new NfsExport(server, '/srv/b'), root: silentRoot as unknown as VolumeRoot };

    await expect(snapshotExport([answering], 'team-a', 'uid-1', 20)).resolves.toBeUndefined();
    await expect(snapshotExport([answering, silent], 'team-a', 'uid-1', 20)).rejects.toThrow(
      'the export mounted at /mnt/b gave no answer within 20 ms',
    );

    const owner = {
      claimUid: 'uid-1',
      namespace: 'team-a',
      claimName: 'snap',
      pvName: 'snapshot-uid-1',
      provisioner: provisionerName,
    };
    await answering.root.createVolume(snapshotPath('team-a', 'uid-1'), {
      owner,
      mode: 0o700,
      parentMode: 0o700,
      ownParentsOnly: true,
    });
    await expect(snapshotExport([silent, answering], 'team-a', 'uid-1', 20)).resolves.toBe(answering);
  });
});
