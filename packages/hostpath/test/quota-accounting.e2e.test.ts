/**
 * On a real kernel with project quotas (the test guest): a root on XFS or ext4 mounted with
 * `prjquota`, a volume directory made a project with a hard block limit, a hostile tree written into
 * it by a non-root workload user, who is stopped at the limit. The usage walk the provisioner runs
 * (safe-fs `scanVolumeUsage`, run inside the guest from this repository's source) finds exactly what
 * the kernel's quota accounting holds for the project: the same bytes and the same inodes.
 */
import { cp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createQuotaFileSystem, guestUser } from '@kube-provisioner/testenv/guest';
import { guestAvailable, useGuest } from '@kube-provisioner/testenv/testing';
import { describe, expect, it } from 'vitest';

const guest = useGuest();
const writer = { uid: guestUser.uid, gid: guestUser.gid };
const projectId = 42;
const limitMiB = 8;

// Run by the guest's Node.js, which strips the types of safe-fs's source.
const measureScript = `
const [source, base, path] = process.argv.slice(2);
const { scanVolumeUsage } = await import(source + '/usage-scan.ts');
const { parseRelativeVolumePath } = await import(source + '/relative-volume-path.ts');
console.log(JSON.stringify(await scanVolumeUsage(base, parseRelativeVolumePath(path))));
`;

// As the workload: a deep chain, hard links, links out of the volume and up, a FIFO, a directory
// only its owner may enter, and a sparse file.
const hostileTree = `
cd "$1"
mkdir -p "$(printf 'd/%.0s' $(seq 1 150))"
head -c 300000 /dev/zero > data
mkdir links && ln data links/a && ln data links/b
ln -s "$2" out && ln -s ../../.. up
mkfifo fifo
mkdir private && head -c 5000 /dev/zero > private/file && chmod 700 private
truncate -s 1G sparse
`;

/** Bytes and inodes the quota of project {@link projectId} accounts for. */
function parseQuota(report: string): { bytes: number; inodes: number } {
  // `#42  <blocks KiB> <soft> <hard> <warn> [grace]  <inodes> <isoft> <ihard> <warn> [grace]`
  const line = report.split('\n').find((l) => l.startsWith(`#${projectId} `));
  const fields = line?.trim().split(/\s+/u) ?? [];
  return { bytes: Number(fields[1]) * 1024, inodes: Number(fields[6]) };
}

describe.skipIf(!guestAvailable())('usage on a root with project quotas', () => {
  it.each([
    ['xfs', /No space left on device/u],
    ['ext4', /Disk quota exceeded/u],
  ] as const)(
    'on %s: the workload is stopped at the limit, and the walk equals the quota accounting',
    async (type, refusal) => {
      const vm = await guest();
      await cp(join(import.meta.dirname, '../../safe-fs/src'), join(vm.shareDir, 'safe-fs-src'), {
        recursive: true,
      });
      await writeFile(join(vm.shareDir, 'measure.mjs'), measureScript);
      const fileSystem = await createQuotaFileSystem(vm, { type });
      try {
        const root = fileSystem.mountPoint;
        await fileSystem.limitProject('ns/vol', projectId, limitMiB, writer);
        await vm.sh('mkdir -p "$1/outside" && head -c 1000000 /dev/zero > "$1/outside/big"', {
          args: [root],
        });
        await vm.sh(hostileTree, { args: [`${root}/ns/vol`, `${root}/outside`], user: writer });

        const write = await vm.run(
          [
            'sh',
            '-c',
            'dd if=/dev/zero of="$1/big" bs=1M count=20 conv=fsync status=none',
            'sh',
            `${root}/ns/vol`,
          ],
          { user: writer },
        );
        expect(write.status).not.toBe(0);
        expect(write.stderr).toMatch(refusal);

        await vm.sh('sync');
        const usage = JSON.parse(
          await vm.sh('node "$1/measure.mjs" "$2" "$3" ns/vol', {
            args: [vm.shareMount, vm.guestPath(join(vm.shareDir, 'safe-fs-src')), root],
          }),
        ) as { bytes: number; inodes: number; unreadable: number };
        const foreign = type === 'ext4' ? '-f ' : '';
        const quota = parseQuota(
          await vm.sh(`xfs_quota ${foreign}-x -c "report -p -n -N -b -i" "$1"`, { args: [root] }),
        );

        expect(usage).toMatchObject({ ...quota, unreadable: 0 });
        // The volume, 150 directories, data with its two links (one inode), links/, out, up, fifo,
        // private/ and its file, sparse, big.
        expect(usage.inodes).toBe(1 + 150 + 1 + 1 + 2 + 1 + 2 + 1 + 1);
        expect(usage.bytes).toBeLessThanOrEqual(limitMiB * 2 ** 20);
        expect(usage.bytes).toBeGreaterThan((limitMiB - 1) * 2 ** 20);
      } finally {
        await fileSystem.remove();
      }
    },
  );
});
