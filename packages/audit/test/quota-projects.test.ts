import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunXfsQuota } from '@kube-provisioner/hostpath';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readQuotaProjects } from '../src/quota-projects.ts';

// `report -p -n -N -b -i` of an XFS mount: the default project, a volume's and a leftover's.
const report = [
  '#0             4          0          0     00 [--------]          6          0          0     00 [--------]',
  '#77         2048       1024       2048     00 [6 days]            3          0          0     00 [--------]',
  '#12            0          0       8192     00 [--------]          0          0          0     00 [--------]',
].join('\n');

let root = '';
beforeEach(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), 'audit-quota-')));
});
afterEach(() => rm(root, { recursive: true, force: true }));

const mounts = (fileSystem: string, options: string) => async () =>
  [
    '22 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw',
    `30 22 8:17 / ${root} rw,relatime - ${fileSystem} /dev/loop0 rw,${options}`,
  ].join('\n');

describe('the quota projects of an audited root', () => {
  it('are every project of the root mount that xfs_quota reports, ascending', async () => {
    const calls: (readonly string[])[] = [];
    const run: RunXfsQuota = async (args) => {
      calls.push(args);
      return report;
    };
    const ids = await readQuotaProjects(join(root, '.'), { readMountInfo: mounts('xfs', 'prjquota'), run });
    expect(ids).toEqual([0, 12, 77]);
    expect(calls).toEqual([['-x', '-c', 'report -p -n -N -b -i', root]]);
  });

  it('are read in foreign mode on ext4', async () => {
    const calls: (readonly string[])[] = [];
    const run: RunXfsQuota = async (args) => {
      calls.push(args);
      return '';
    };
    expect(await readQuotaProjects(root, { readMountInfo: mounts('ext4', 'prjquota'), run })).toEqual([]);
    expect(calls[0]?.[0]).toBe('-f');
  });

  it('cannot be read from a root mounted without prjquota, and say which option is missing', async () => {
    const run: RunXfsQuota = async () => report;
    await expect(readQuotaProjects(root, { readMountInfo: mounts('xfs', 'noquota'), run })).rejects.toThrow(
      /^cannot read quota projects: .* without the mount option "prjquota"/u,
    );
  });

  it('name the package to install when xfs_quota is missing', async () => {
    const run: RunXfsQuota = async () => {
      throw new Error('xfs_quota failed', { cause: Object.assign(new Error('spawn'), { code: 'ENOENT' }) });
    };
    await expect(readQuotaProjects(root, { readMountInfo: mounts('xfs', 'prjquota'), run })).rejects.toThrow(
      /xfs_quota is not installed \(Debian: apt-get install xfsprogs\)/u,
    );
  });
});
