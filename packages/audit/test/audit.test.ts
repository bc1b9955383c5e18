import { resources } from '@kube-provisioner/controller/client';
import { FakeKubeApi } from '@kube-provisioner/controller/testing';
import { describe, expect, it } from 'vitest';
import type { AuditReport } from '../src/audit.ts';
import { auditVolumes } from '../src/audit.ts';
import { formatJson, formatTable } from '../src/report-format.ts';
import { exportPath, nfsVolume, provisionDirectory, provisionerName, volumeRootDir } from './fixtures.ts';

describe('auditVolumes', () => {
  it('lists PVs of its provisioner only, walks the root and renders both outputs', async () => {
    const api = new FakeKubeApi();
    const pvs = api.resource(resources.persistentVolumes);
    const { dir, root } = await volumeRootDir();
    await provisionDirectory(root, 'ns/ok', 'pvc-ok');
    await provisionDirectory(root, 'ns/orphan', 'pvc-gone');
    await pvs.create(nfsVolume({ name: 'pvc-ok', path: 'ns/ok' }));
    await pvs.create(nfsVolume({ name: 'pvc-missing', path: 'ns/missing' }));
    await pvs.create(nfsVolume({ name: 'pvc-other', path: 'elsewhere', provisioner: 'example.com/other' }));

    const report = await auditVolumes({
      api,
      provisionerName,
      root: dir,
      layout: { kind: 'nfs', exportPath },
      now: () => Date.parse('2026-06-01T12:00:00Z'),
    });

    expect(report.summary).toEqual({
      persistentVolumes: 2,
      volumeDirectories: 2,
      archived: 0,
      retained: 0,
      findings: 2,
    });
    expect(report.findings.map((finding) => [finding.kind, finding.path])).toEqual([
      ['pv-without-directory', 'ns/missing'],
      ['directory-without-pv', 'ns/orphan'],
    ]);
    expect(report.auditedAt).toBe('2026-06-01T12:00:00.000Z');
    expect(JSON.parse(formatJson(report))).toEqual(JSON.parse(JSON.stringify(report)));
    const table = formatTable(report).split('\n');
    expect(table[0]).toBe(
      `${provisionerName} on ${dir}: 2 PVs, 2 volume directories (0 archived, 0 retained), 2 findings`,
    );
    expect(table[2]).toMatch(/^KIND\s+PV\s+CLAIM\s+PATH\s+MESSAGE$/u);
    expect(table[3]).toMatch(
      /^pv-without-directory\s+pvc-missing\s+team-a\/claim-of-pvc-missing\s+ns\/missing\s+PV pvc-missing points at/u,
    );
  });

  it('lists the archives with their claim, age and expiry under the findings', () => {
    const report: AuditReport = {
      provisioner: provisionerName,
      root: '/export',
      layout: { kind: 'nfs', exportPath },
      auditedAt: '2026-06-01T12:00:00.000Z',
      summary: { persistentVolumes: 0, volumeDirectories: 3, archived: 3, retained: 0, findings: 0 },
      findings: [],
      archives: [
        {
          path: 'archived-a',
          pvName: 'pvc-1',
          claim: { namespace: 'ns', name: 'db', uid: 'u1' },
          ageSeconds: 3 * 86_400,
          expiresInSeconds: 0,
        },
        { path: 'archived-b', pvName: 'pvc-2', ageSeconds: 5400, expiresInSeconds: 27 * 86_400 },
        { path: 'archived-upstream' },
      ],
      snapshots: [],
    };
    expect(formatTable(report).split('\n').slice(2, 6)).toEqual([
      'ARCHIVE            PV     CLAIM  AGE  EXPIRES',
      'archived-a         pvc-1  ns/db  3d   expired',
      'archived-b         pvc-2  -      1h   in 27d',
      'archived-upstream  -      -      -    never',
    ]);
  });

  it('says "no findings" on a clean root', async () => {
    const { dir } = await volumeRootDir();
    const report = await auditVolumes({
      api: new FakeKubeApi(),
      provisionerName,
      root: dir,
      layout: { kind: 'hostpath', hostRoot: dir },
    });
    expect(formatTable(report)).toBe(
      `${provisionerName} on ${dir}: 0 PVs, 0 volume directories (0 archived, 0 retained), no findings\n`,
    );
  });
});
