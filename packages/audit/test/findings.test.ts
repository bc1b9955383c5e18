import type { OwnershipRecord } from '@kube-provisioner/safe-fs';
import { describe, expect, it } from 'vitest';
import type { ClusterState } from '../src/cluster-state.ts';
import { type Finding, judge } from '../src/findings.ts';
import type { VolumeLayout } from '../src/volume-layout.ts';
import type { ScannedVolume, VolumeScan } from '../src/volume-scan.ts';
import { exportPath, nfsVolume, type VolumeInit } from './fixtures.ts';

const layout: VolumeLayout = { kind: 'nfs', exportPath, server: 'nfs.example.com' };
const nowMs = Date.parse('2026-06-01T12:00:00Z');
const minute = 60_000;

function record(pvName: string, extra: Partial<OwnershipRecord> = {}): OwnershipRecord {
  return {
    claimUid: `uid-${pvName}`,
    namespace: 'team-a',
    claimName: `claim-of-${pvName}`,
    pvName,
    provisioner: 'example.com/nfs',
    createdAt: '2026-06-01T00:00:00Z',
    ...extra,
  };
}

function run(
  volumes: readonly VolumeInit[],
  directories: readonly ScannedVolume[],
  scan: Partial<VolumeScan> = {},
  bound: ReadonlyMap<string, string> = new Map(),
): readonly Finding[] {
  const cluster: ClusterState = { volumes: volumes.map(nfsVolume), boundVolumeOfClaim: bound };
  return judge({
    layout,
    cluster,
    scan: { volumes: directories, leftovers: [], unreadable: [], ...scan },
    nowMs,
    graceMs: 5 * minute,
  }).findings;
}

describe('judge', () => {
  it('finds nothing when every PV has its directory and every directory its PV', () => {
    const findings = run(
      [{ name: 'pvc-1', path: 'a' }],
      [
        { path: 'a', record: record('pvc-1') },
        { path: 'archived-b-pvc-2', record: record('pvc-2') },
        { path: 'kept', record: record('pvc-3', { releasedAt: '2026-06-01T01:00:00Z' }) },
      ],
    );
    expect(findings).toEqual([]);
  });

  it('reports a volume inside another, as a nesting race left them', () => {
    const findings = run(
      [
        { name: 'pvc-1', path: 'o1' },
        { name: 'pvc-2', path: 'o1/db' },
      ],
      [{ path: 'o1', record: record('pvc-1') }],
    );
    expect(findings.filter((finding) => finding.kind === 'nested-volume')).toEqual([
      {
        kind: 'nested-volume',
        pvs: [],
        path: 'o1/db',
        message: 'volume o1/db lies inside volume o1: deleting o1 would remove its data',
      },
    ]);
  });

  it('reports a PV whose directory is missing, or outside the export', () => {
    const findings = run(
      [
        { name: 'pvc-1', path: 'a' },
        { name: 'pvc-2', path: '../etc' },
      ],
      [],
    );
    expect(findings).toEqual([
      expect.objectContaining({ kind: 'pv-without-directory', pvs: ['pvc-1'], path: 'a' }),
      expect.objectContaining({
        kind: 'pv-without-directory',
        pvs: ['pvc-2'],
        message: expect.stringMatching(/not a volume path below \/export\/k8s/u),
      }),
    ]);
  });

  it('reports a PV whose directory is recorded for another PV', () => {
    const findings = run([{ name: 'pvc-1', path: 'a' }], [{ path: 'a', record: record('pvc-9') }]);
    expect(findings).toEqual([
      expect.objectContaining({ kind: 'pv-directory-mismatch', pvs: ['pvc-1', 'pvc-9'], path: 'a' }),
    ]);
  });

  it('reports recorded and upstream-named directories that no PV points at, with the recorded claim', () => {
    const findings = run(
      [],
      [
        { path: 'ns/orphan', record: record('pvc-5') },
        { path: 'team-a-x-pvc-0b9f6d1e-8c1a-4b8e-9f3e-0a1b2c3d4e5f', record: undefined },
      ],
    );
    expect(findings).toEqual([
      expect.objectContaining({
        kind: 'directory-without-pv',
        pvs: ['pvc-5'],
        path: 'ns/orphan',
        claim: { namespace: 'team-a', name: 'claim-of-pvc-5', uid: 'uid-pvc-5' },
      }),
      expect.objectContaining({ kind: 'directory-without-pv', pvs: [] }),
    ]);
  });

  it('reports a claim with two PVs and names the one it is bound to', () => {
    const findings = run(
      [
        { name: 'pvc-1', path: 'a', claimUid: 'same' },
        { name: 'pvc-2', path: 'b', claimUid: 'same' },
      ],
      [
        { path: 'a', record: record('pvc-1') },
        { path: 'b', record: record('pvc-2') },
      ],
      {},
      new Map([['same', 'pvc-1']]),
    );
    expect(findings).toEqual([
      expect.objectContaining({
        kind: 'claim-provisioned-twice',
        pvs: ['pvc-1', 'pvc-2'],
        message: expect.stringMatching(/bound to pvc-1/u),
      }),
    ]);
  });

  it('reports a finalizer only after the grace, and never the deleted PV as missing its directory', () => {
    const findings = run(
      [
        { name: 'pvc-old', path: 'a', deletionTimestamp: new Date(nowMs - 10 * minute) },
        { name: 'pvc-new', path: 'b', deletionTimestamp: new Date(nowMs - minute) },
      ],
      [],
    );
    expect(findings).toEqual([
      expect.objectContaining({
        kind: 'finalizer-stuck',
        pvs: ['pvc-old'],
        message: expect.stringMatching(/600 s/u),
      }),
    ]);
  });

  it('reports Released PVs with policy Delete after the grace, or at once without a transition time', () => {
    const findings = run(
      [
        {
          name: 'pvc-old',
          path: 'a',
          phase: 'Released',
          lastPhaseTransitionTime: new Date(nowMs - 6 * minute),
        },
        { name: 'pvc-new', path: 'b', phase: 'Released', lastPhaseTransitionTime: new Date(nowMs - minute) },
        { name: 'pvc-untimed', path: 'c', phase: 'Released' },
        { name: 'pvc-retain', path: 'd', phase: 'Released', reclaimPolicy: 'Retain' },
      ],
      ['a', 'b', 'c', 'd'].map((path, i) => ({
        path,
        record: record(['pvc-old', 'pvc-new', 'pvc-untimed', 'pvc-retain'][i] ?? ''),
      })),
    );
    expect(findings.map((finding) => [finding.kind, finding.pvs[0]])).toEqual([
      ['released-delete', 'pvc-old'],
      ['released-delete', 'pvc-untimed'],
    ]);
  });

  it('reports temporary files older than the grace, stray records at once, and unreadable entries', () => {
    const findings = run([], [], {
      leftovers: [
        { path: 'ns/.kube-provisioner.tmp.1', kind: 'temporary', modifiedAtMs: nowMs - 10 * minute },
        { path: 'ns/.kube-provisioner.tmp.2', kind: 'temporary', modifiedAtMs: nowMs - 1000 },
        { path: '.x.kube-provisioner.json', kind: 'record', modifiedAtMs: nowMs },
        { path: '.y.kube-provisioner.lock', kind: 'lock', modifiedAtMs: nowMs },
      ],
      unreadable: [{ path: 'z', error: 'EACCES' }],
    });
    expect(findings.map((finding) => [finding.kind, finding.path])).toEqual([
      ['temporary-file', 'ns/.kube-provisioner.tmp.1'],
      ['stray-record', '.x.kube-provisioner.json'],
      ['stray-record', '.y.kube-provisioner.lock'],
      ['unreadable', 'z'],
    ]);
  });

  it('reports quota projects no volume record holds, when the file system projects are given', () => {
    const directories = [
      { path: 'a', record: record('pvc-1', { projectId: 1 }) },
      { path: 'archived-b-pvc-2', record: record('pvc-2', { projectId: 2 }) },
    ];
    const cluster: ClusterState = {
      volumes: [nfsVolume({ name: 'pvc-1', path: 'a' })],
      boundVolumeOfClaim: new Map(),
    };
    const { findings } = judge({
      layout,
      cluster,
      scan: { volumes: directories, leftovers: [], unreadable: [] },
      nowMs,
      graceMs: 5 * minute,
      projectIds: [0, 1, 2, 3],
    });
    expect(findings).toEqual([
      {
        kind: 'project-without-volume',
        pvs: [],
        message:
          "quota project 3 has usage or limits on the root's file system, but no volume's ownership record holds it",
      },
    ]);
  });

  it('lists archives oldest first with their age and expiry, from their records', () => {
    const { archives, summary } = judge({
      layout,
      cluster: { volumes: [], boundVolumeOfClaim: new Map() },
      scan: {
        volumes: [
          {
            path: 'archived-a-pvc-1',
            record: record('pvc-1', {
              archivedAt: '2026-06-01T11:00:00Z',
              expiresAt: '2026-06-02T11:00:00Z',
            }),
          },
          {
            path: 'archived-b-pvc-2',
            record: record('pvc-2', {
              archivedAt: '2026-05-01T12:00:00Z',
              expiresAt: '2026-05-31T12:00:00Z',
            }),
          },
          { path: 'archived-c-pvc-3', record: record('pvc-3', { archivedAt: '2026-06-01T11:59:00Z' }) },
          { path: 'archived-upstream', record: undefined },
        ],
        leftovers: [],
        unreadable: [],
      },
      nowMs,
      graceMs: 0,
    });
    expect(summary.archived).toBe(4);
    expect(archives).toEqual([
      {
        path: 'archived-b-pvc-2',
        pvName: 'pvc-2',
        claim: { namespace: 'team-a', name: 'claim-of-pvc-2', uid: 'uid-pvc-2' },
        archivedAt: '2026-05-01T12:00:00Z',
        ageSeconds: 31 * 86_400,
        expiresAt: '2026-05-31T12:00:00Z',
        expiresInSeconds: 0,
      },
      expect.objectContaining({ path: 'archived-a-pvc-1', ageSeconds: 3600, expiresInSeconds: 23 * 3600 }),
      expect.objectContaining({ path: 'archived-c-pvc-3', ageSeconds: 60 }),
      { path: 'archived-upstream' },
    ]);
    expect(archives[2]).not.toHaveProperty('expiresAt');
  });

  it('audits only the PVs of its node in per-node hostpath mode', () => {
    const hostLayout: VolumeLayout = { kind: 'hostpath', hostRoot: '/var/lib/hp', node: 'n1' };
    const pv = (name: string, node: string) => ({
      metadata: { name, annotations: { hostPathProvisionerIdentity: node } },
      spec: { hostPath: { path: `/var/lib/hp/${name}` } },
      status: { phase: 'Bound' },
    });
    const { findings, summary } = judge({
      layout: hostLayout,
      cluster: { volumes: [pv('pvc-1', 'n1'), pv('pvc-2', 'n2')], boundVolumeOfClaim: new Map() },
      scan: { volumes: [{ path: 'pvc-1', record: undefined }], leftovers: [], unreadable: [] },
      nowMs,
      graceMs: 0,
    });
    expect(findings).toEqual([]);
    expect(summary).toEqual({
      persistentVolumes: 1,
      volumeDirectories: 1,
      archived: 0,
      retained: 0,
      findings: 0,
    });
  });
});
