import { describe, expect, it } from 'vitest';
import { checkQuotaMount } from '../src/quota-mount.ts';
import { parseReport } from '../src/xfs-quota.ts';

const mountInfo = [
  '22 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw',
  '30 22 8:17 / /srv/xfs rw,relatime - xfs /dev/sdb1 rw,attr2,inode64,prjquota',
  '31 22 8:18 / /srv/plain rw,relatime - xfs /dev/sdb2 rw,attr2,inode64,noquota',
  '32 22 8:19 / /srv/ext4 rw,relatime shared:5 - ext4 /dev/sdb3 rw,prjquota',
  '33 22 0:40 / /srv/with\\040space rw - xfs /dev/sdb4 rw,prjquota',
  '34 30 0:41 / /srv/xfs/tmp rw - tmpfs tmpfs rw',
].join('\n');

describe('which roots can enforce sizes', () => {
  it('finds XFS and ext4 mounted with prjquota, by the deepest mount holding the root', () => {
    expect(checkQuotaMount('/srv/xfs/volumes', mountInfo)).toEqual({
      enforced: true,
      mount: { fileSystem: 'xfs', mountPoint: '/srv/xfs' },
    });
    expect(checkQuotaMount('/srv/ext4', mountInfo)).toEqual({
      enforced: true,
      mount: { fileSystem: 'ext4', mountPoint: '/srv/ext4' },
    });
    expect(checkQuotaMount('/srv/with space/v', mountInfo)).toMatchObject({ enforced: true });
  });

  it('names the missing mount option, and the ext4 features, when prjquota is missing', () => {
    expect(checkQuotaMount('/srv/plain/v', mountInfo)).toEqual({
      enforced: false,
      reason:
        'the root /srv/plain/v is on xfs (mounted at /srv/plain) without the mount option "prjquota": mount it with -o prjquota to enforce sizes',
    });
    expect(checkQuotaMount('/var/lib/volumes', mountInfo)).toMatchObject({
      reason: expect.stringMatching(
        /on ext4 \(mounted at \/\) without the mount option "prjquota".*tune2fs -O project,quota/,
      ),
    });
  });

  it('refuses file systems without project quotas', () => {
    expect(checkQuotaMount('/srv/xfs/tmp/v', mountInfo)).toMatchObject({
      enforced: false,
      reason: expect.stringContaining('is on tmpfs (mounted at /srv/xfs/tmp), which has no project quotas'),
    });
    // A prefix of a name is not a parent directory.
    expect(checkQuotaMount('/srv/xfsother', mountInfo)).toMatchObject({ enforced: false });
  });
});

describe('the xfs_quota report', () => {
  it('gives bytes and inodes per project, also while a grace period runs', () => {
    const report = [
      '#0                   4          0          0     00 [--------]          6          0          0     00 [--------]',
      '#77               2048       1024       4096     00  [6 days]          3          0          0     00 [--------]',
      '',
    ].join('\n');
    expect(parseReport(report)).toEqual(
      new Map([
        [0, { bytes: 4096, inodes: 6 }],
        [77, { bytes: 2048 * 1024, inodes: 3 }],
      ]),
    );
  });
});
