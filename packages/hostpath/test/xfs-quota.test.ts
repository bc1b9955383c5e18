import { describe, expect, it } from 'vitest';
import type { QuotaMount } from '../src/quota-mount.ts';
import { noProjectLimits, parseReport, type RunXfsQuota, xfsQuota } from '../src/xfs-quota.ts';

/** `xfs_quota` as a recorder of its command lines. */
function recordingRun(): { run: RunXfsQuota; commands: string[][] } {
  const commands: string[][] = [];
  return {
    commands,
    run: async (args) => {
      commands.push([...args]);
      return '';
    },
  };
}

const signal = new AbortController().signal;
const xfs: QuotaMount = { fileSystem: 'xfs', mountPoint: '/srv/xfs' };
const ext4: QuotaMount = { fileSystem: 'ext4', mountPoint: '/srv/ext4' };
const mib = 2 ** 20;

describe('the xfs_quota limit command', () => {
  it('sets the block and the inode limits of a project in one command', async () => {
    const { run, commands } = recordingRun();
    const limits = { softBytes: 11 * mib, hardBytes: 15 * mib, softInodes: 0, hardInodes: 25_600 };
    await xfsQuota(xfs, run).limit(7, limits, signal);

    expect(commands).toEqual([
      ['-x', '-c', 'limit -p bsoft=11264k bhard=15360k isoft=0 ihard=25600 7', '/srv/xfs'],
    ]);
  });

  it('speaks to ext4 in foreign mode, with the same limits', async () => {
    const { run, commands } = recordingRun();
    const limits = { softBytes: 0, hardBytes: mib, softInodes: 500, hardInodes: 1000 };
    await xfsQuota(ext4, run).limit(3, limits, signal);

    expect(commands).toEqual([
      ['-f', '-x', '-c', 'limit -p bsoft=0k bhard=1024k isoft=500 ihard=1000 3', '/srv/ext4'],
    ]);
  });

  it('clears the inode limits with the block limits', async () => {
    const { run, commands } = recordingRun();
    await xfsQuota(xfs, run).limit(9, noProjectLimits, signal);

    expect(commands).toEqual([['-x', '-c', 'limit -p bsoft=0k bhard=0k isoft=0 ihard=0 9', '/srv/xfs']]);
  });

  it('refuses an inode limit xfs_quota would misread, and runs nothing', async () => {
    const { run, commands } = recordingRun();
    for (const hardInodes of [1.5, -1, Number.NaN, 2 ** 60]) {
      await expect(
        xfsQuota(xfs, run).limit(1, { ...noProjectLimits, hardBytes: mib, hardInodes }, signal),
      ).rejects.toThrow('is not an inode limit');
    }
    expect(commands).toEqual([]);
  });
});

describe('the xfs_quota report with inode limits', () => {
  it('gives the inodes used, not the inode limits beside them', () => {
    const report = [
      '#1               8192          0       8192     00 [--------]        202          0      10000     00 [--------]',
      '#2               1024          0       8192     00 [--------]      10000          0      10000     00  [7 days]',
      '',
    ].join('\n');
    expect(parseReport(report)).toEqual(
      new Map([
        [1, { bytes: 8 * mib, inodes: 202 }],
        [2, { bytes: mib, inodes: 10_000 }],
      ]),
    );
  });
});
