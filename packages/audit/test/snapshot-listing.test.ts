import { FakeKubeApi } from '@kube-provisioner/controller/testing';
import { directorySnapshots } from '@kube-provisioner/hostpath';
import { snapshotPath, type VolumeRoot } from '@kube-provisioner/safe-fs';
import { describe, expect, it } from 'vitest';
import { auditVolumes } from '../src/audit.ts';
import { formatTable } from '../src/report-format.ts';
import { exportPath, provisionerName, volumeRootDir } from './fixtures.ts';

const now = Date.parse('2026-06-01T12:00:00Z');

/** Snapshot data as hostpath’s taker leaves it: recorded in the area, owned by `provisioner`. */
async function snapshotData(root: VolumeRoot, name: string, uid: string, provisioner = provisionerName) {
  await root.createVolume(snapshotPath('team-a', uid), {
    owner: { claimUid: uid, namespace: 'team-a', claimName: name, pvName: `snapshot-${uid}`, provisioner },
    mode: 0o700,
  });
}

function audit(api: FakeKubeApi, dir: string, at = now) {
  return auditVolumes({
    api,
    provisionerName,
    root: dir,
    layout: { kind: 'nfs', exportPath },
    now: () => at,
  });
}

describe('the audit of snapshots', () => {
  it('lists each snapshot with its source, readiness and age, and reports one whose object is gone unless it was retained', async () => {
    const { dir, root } = await volumeRootDir();
    const api = new FakeKubeApi();
    api.seed(directorySnapshots, {
      metadata: { name: 'monday', namespace: 'team-a', uid: 'uid-monday' },
      spec: { source: { persistentVolumeClaimName: 'db' } },
      status: { readyToUse: true },
    });
    await snapshotData(root, 'monday', 'uid-monday');
    await snapshotData(root, 'kept', 'uid-kept');
    await root.releaseVolume(snapshotPath('team-a', 'uid-kept'), { pvName: 'snapshot-uid-kept' });
    await snapshotData(root, 'lost', 'uid-lost');
    await snapshotData(root, 'foreign', 'uid-foreign', 'example.com/other');

    const report = await audit(api, dir, Date.now() + 2 * 3600_000);

    expect(
      report.snapshots.map(({ ageSeconds, ...rest }) => rest).sort((a, b) => a.name.localeCompare(b.name)),
    ).toEqual([
      {
        path: '.kube-provisioner-snapshots/team-a/uid-kept',
        namespace: 'team-a',
        name: 'kept',
        uid: 'uid-kept',
        state: 'retained',
      },
      {
        path: '.kube-provisioner-snapshots/team-a/uid-lost',
        namespace: 'team-a',
        name: 'lost',
        uid: 'uid-lost',
        state: 'orphaned',
      },
      {
        path: '.kube-provisioner-snapshots/team-a/uid-monday',
        namespace: 'team-a',
        name: 'monday',
        uid: 'uid-monday',
        source: 'db',
        readyToUse: true,
        state: 'live',
      },
    ]);
    expect(report.snapshots.every(({ ageSeconds }) => ageSeconds >= 7199 && ageSeconds <= 7201)).toBe(true);
    expect(report.findings).toEqual([
      expect.objectContaining({
        kind: 'snapshot-without-object',
        path: '.kube-provisioner-snapshots/team-a/uid-lost',
        message: expect.stringContaining('DirectorySnapshot team-a/lost (uid-lost), whose object is gone'),
      }),
    ]);
    expect(report.summary.findings).toBe(1);
    const table = formatTable(report);
    expect(table).toMatch(/^SNAPSHOT\s+SOURCE\s+READY\s+AGE\s+STATE$/mu);
    expect(table).toMatch(/^team-a\/monday\s+team-a\/db\s+true\s+2h\s+live$/mu);
  });

  it('lists no DirectorySnapshots when the root has no snapshots', async () => {
    const { dir } = await volumeRootDir();
    const api = new FakeKubeApi();

    const report = await audit(api, dir);

    expect(report.snapshots).toEqual([]);
    expect(api.actions().filter((action) => action.resource === 'directorysnapshots')).toEqual([]);
  });
});
