/**
 * End-to-end: what happens to a volume's data after its claim, with the `nfs-client-provisioner` bin
 * under the example RBAC against the real control plane and a real NFS server (nfs-ganesha): an
 * archive of a class with `archiveRetention` is removed once its time has come and not before, while
 * other archives stay; archived data is taken back by a new claim of its namespace and refused to
 * any other; and a claim with another claim as its `dataSource` gets an identical copy.
 */
import { existsSync } from 'node:fs';
import { link, mkdir, readFile, readlink, stat, symlink, writeFile } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { eventually } from '@kube-provisioner/controller/testing';
import { annTakeBackFrom } from '@kube-provisioner/nfs-subdir';
import { type OwnershipRecord, recordName } from '@kube-provisioner/safe-fs';
import { treeSnapshot } from '@kube-provisioner/safe-fs/testing';
import { bindClaim, createClaims, deleteClaimAndVolume, waitFor } from '@kube-provisioner/testenv';
import {
  type NfsProvisionerUnderTest,
  nfsToolsAvailable,
  reachVolumeOverNfs,
  useTestEnv,
} from '@kube-provisioner/testenv/testing';
import { CoreV1Api, type CoreV1Event, type V1PersistentVolume } from '@kubernetes/client-node';
import { beforeAll, describe, expect, it } from 'vitest';
import { useExampleDeployment } from './example-deployment.ts';

const env = useTestEnv();
const core = env.kubeConfig.makeApiClient(CoreV1Api);
// Expired archives are removed by the leader's maintenance run, every `--usage-interval`: every
// second here, so that an archive kept for a few seconds goes within the test.
const provisioners = useExampleDeployment(env, 'nfs-lifecycle', ['--usage-interval', '1s']);
const timeoutMs = 60_000;
const retentionMs = 10_000;

/** The directory of `pv` on the export's disk, relative to the export. */
function volumeDir(deployment: NfsProvisionerUnderTest, pv: V1PersistentVolume): string {
  return posix.relative(deployment.server.exportPath, pv.spec?.nfs?.path ?? '');
}

/** The ownership record the provisioner keeps beside directory `leaf` of the export root. */
async function ownershipRecord(deployment: NfsProvisionerUnderTest, leaf: string): Promise<OwnershipRecord> {
  // Records are symbolic links whose target is the JSON.
  const text = await readlink(join(deployment.server.exportDir, recordName(leaf)));
  return JSON.parse(text) as OwnershipRecord;
}

/** The first Event with `reason` about claim `name` of `namespace`, once there is one. */
function eventAbout(namespace: string, name: string, reason: string): Promise<CoreV1Event> {
  const fieldSelector = `involvedObject.name=${name},reason=${reason}`;
  return waitFor(async () => (await core.listNamespacedEvent({ namespace, fieldSelector })).items[0], {
    timeoutMs,
    description: `a ${reason} event about ${namespace}/${name}`,
  });
}

describe.skipIf(!nfsToolsAvailable())('the data lifecycle with nfs-client-provisioner', () => {
  let main: NfsProvisionerUnderTest;

  beforeAll(async () => {
    main = await provisioners.deploy('/export');
  });

  it('removes an archive once its class archiveRetention has passed, not before, and keeps the others', async () => {
    const [expiringClass, keptClass] = await Promise.all([
      provisioners.storageClass(main, { archiveRetention: `${retentionMs / 1000}s` }),
      provisioners.storageClass(main),
    ]);
    const namespace = await env.namespace('lifecycle');
    const [expiring, kept] = await Promise.all([
      bindClaim(env.kubeConfig, { namespace, name: 'expiring', storageClassName: expiringClass, timeoutMs }),
      bindClaim(env.kubeConfig, { namespace, name: 'kept', storageClassName: keptClass, timeoutMs }),
    ]);
    const expiringArchive = `archived-${await reachVolumeOverNfs(main.server, expiring)}`;
    const keptArchive = `archived-${await reachVolumeOverNfs(main.server, kept)}`;
    await Promise.all([
      deleteClaimAndVolume(env.kubeConfig, expiring, timeoutMs),
      deleteClaimAndVolume(env.kubeConfig, kept, timeoutMs),
    ]);

    const checkedAt = Date.now();
    expect(existsSync(join(main.server.exportDir, expiringArchive))).toBe(true);
    const record = await ownershipRecord(main, expiringArchive);
    const expiresAt = Date.parse(record.expiresAt ?? '');
    expect(expiresAt - Date.parse(record.archivedAt ?? '')).toBe(retentionMs);
    // The archive was there before its time (several sweeps have run since it was made).
    expect(checkedAt).toBeLessThan(expiresAt);

    const goneAt = await eventually(
      () => {
        expect(existsSync(join(main.server.exportDir, expiringArchive))).toBe(false);
        return Date.now();
      },
      { timeoutMs: retentionMs + 20_000, intervalMs: 100 },
    );
    expect(goneAt).toBeGreaterThanOrEqual(expiresAt);
    // The record goes last, once the tree is empty.
    await eventually(
      () => expect(existsSync(join(main.server.exportDir, recordName(expiringArchive)))).toBe(false),
      {
        timeoutMs: 10_000,
        intervalMs: 100,
      },
    );

    // Swept with it, the archive of the class without retention stays, data and record.
    expect(await readFile(join(main.server.exportDir, keptArchive, 'probe.txt'), 'utf8')).toBe(
      `probe for ${kept.metadata?.name}\n`,
    );
    const keptRecord = await ownershipRecord(main, keptArchive);
    expect(keptRecord.archivedAt).toBeDefined();
    expect(keptRecord.expiresAt).toBeUndefined();
  });

  it('moves archived data into a new claim of its namespace and refuses a claim of another', async () => {
    const storageClassName = await provisioners.storageClass(main);
    const namespace = await env.namespace('lifecycle');
    const old = await bindClaim(env.kubeConfig, { namespace, name: 'data', storageClassName, timeoutMs });
    const oldPv = old.metadata?.name ?? '';
    const archive = join(main.server.exportDir, `archived-${await reachVolumeOverNfs(main.server, old)}`);
    await deleteClaimAndVolume(env.kubeConfig, old, timeoutMs);
    const archived = await stat(archive);
    const annotations = { [annTakeBackFrom]: oldPv };

    const stranger = await env.namespace('lifecycle');
    await createClaims(env.kubeConfig, {
      namespace: stranger,
      names: ['data'],
      storageClassName,
      annotations,
    });
    const refusal = await eventAbout(stranger, 'data', 'ProvisioningFailed');
    expect(refusal.type).toBe('Warning');
    expect(refusal.message).toContain(
      `the data of ${oldPv} belongs to another namespace than "${stranger}"; the StorageClass does not allow taking it back across namespaces`,
    );
    // It never says whose the data is.
    expect(refusal.message).not.toContain(namespace);
    expect(existsSync(archive)).toBe(true);

    const taken = await bindClaim(env.kubeConfig, {
      namespace,
      name: 'again',
      storageClassName,
      annotations,
      timeoutMs,
    });
    const takenDir = join(main.server.exportDir, volumeDir(main, taken));
    expect(volumeDir(main, taken)).toBe(`${namespace}-again-${taken.metadata?.name}`);
    // Renamed, not copied: the same directory, with the old volume's data.
    expect((await stat(takenDir)).ino).toBe(archived.ino);
    expect(await readFile(join(takenDir, 'probe.txt'), 'utf8')).toBe(`probe for ${oldPv}\n`);
    expect(existsSync(archive)).toBe(false);
    expect((await eventAbout(namespace, 'again', 'VolumeTakenBack')).message).toContain(oldPv);
  });

  it('clones a tree of a few hundred files, a hard link and a link out of the volume, identical', async () => {
    const storageClassName = await provisioners.storageClass(main, { archiveOnDelete: 'false' });
    const namespace = await env.namespace('lifecycle');
    const source = await bindClaim(env.kubeConfig, { namespace, name: 'src', storageClassName, timeoutMs });
    const sourceDir = join(main.server.exportDir, await reachVolumeOverNfs(main.server, source));
    for (let d = 0; d < 10; d++) {
      await mkdir(join(sourceDir, `d${d}`));
      await Promise.all(
        Array.from({ length: 30 }, (_, f) =>
          writeFile(join(sourceDir, `d${d}`, `f${f}`), `file ${d}/${f}\n`),
        ),
      );
    }
    await link(join(sourceDir, 'd0/f0'), join(sourceDir, 'hard'));
    await symlink('/etc', join(sourceDir, 'out'));

    await core.createNamespacedPersistentVolumeClaim({
      namespace,
      body: {
        metadata: { name: 'copy' },
        spec: {
          storageClassName,
          accessModes: ['ReadWriteMany'],
          resources: { requests: { storage: '1Gi' } },
          dataSource: { kind: 'PersistentVolumeClaim', name: 'src' },
        },
      },
    });
    const volumeName = await waitFor(
      async () => {
        const claim = await core.readNamespacedPersistentVolumeClaim({ namespace, name: 'copy' });
        return claim.status?.phase === 'Bound' ? claim.spec?.volumeName : undefined;
      },
      { timeoutMs, description: `the clone ${namespace}/copy to be Bound` },
    );

    const pv = await core.readPersistentVolume({ name: volumeName });
    const copy = await treeSnapshot(join(main.server.exportDir, volumeDir(main, pv)));
    // 10 directories, 300 files, the hard link, the link and the probe.
    expect(Object.keys(copy)).toHaveLength(313);
    expect(copy).toEqual(await treeSnapshot(sourceDir));
    expect(copy.hard).toMatch(/ same-as d0\/f0$/u);
    expect(copy.out).toMatch(/^link \/etc /u);
  });
});
