/**
 * The file system under the volume roots, as the report names it: safe-fs's name for it, and for
 * ext4 whether it has a journal. Without one, ext4's inode allocator passes over every inode freed
 * in the last 5 seconds (5 minutes while its inode table block is not yet written back), reading
 * each one's deletion time, so a create that follows many deletions (the previous round's, or the
 * delete scenario's) costs several times the kernel time it costs with a journal
 * (`docs/benchmarks.md`, ninth round).
 */
import { readFileSync, readlinkSync, statSync } from 'node:fs';
import { basename } from 'node:path';
import { fsOpsForRoot } from '@kube-provisioner/safe-fs';

/** What {@link volumeFileSystem} reads; replaced in tests. */
export interface FileSystemProbe {
  /** safe-fs's name of the file system at the path (`ext4`, `tmpfs`, …). */
  readonly fileSystemName: (path: string) => string;
  /** `stat(2)`'s `st_dev` of the path. */
  readonly device: (path: string) => number;
  readonly readLink: (path: string) => string;
  readonly readText: (path: string) => string;
}

const systemProbe: FileSystemProbe = {
  fileSystemName: (path) => fsOpsForRoot(path).fileSystem,
  device: (path) => statSync(path).dev,
  readLink: (path) => readlinkSync(path),
  readText: (path) => readFileSync(path, 'utf8'),
};

/** A file system as the report describes it. */
export interface VolumeFileSystem {
  /** safe-fs's name for it. */
  readonly name: string;
  /** ext4 only: whether it has a journal; absent for other file systems, or when it cannot be told. */
  readonly journal?: boolean;
}

/** The file system at `path`. */
export function volumeFileSystem(path: string, probe: FileSystemProbe = systemProbe): VolumeFileSystem {
  const name = probe.fileSystemName(path);
  const journal = name === 'ext4' ? ext4HasJournal(path, probe) : undefined;
  return journal === undefined ? { name } : { name, journal };
}

/** How the report names `fileSystem`: `ext4`, `ext4, no journal`, `tmpfs`, … */
export function fileSystemLabel(fileSystem: VolumeFileSystem): string {
  return fileSystem.journal === false ? `${fileSystem.name}, no journal` : fileSystem.name;
}

/**
 * Whether the ext4 file system at `path` has a journal: its `/proc/fs/ext4/<device>/options` names
 * a data mode (`data=ordered`, `data=journal`, `data=writeback`) only then. `undefined` when the
 * device or its options cannot be read.
 */
function ext4HasJournal(path: string, probe: FileSystemProbe): boolean | undefined {
  try {
    const device = probe.device(path);
    // Linux's encoding of a device number: 12 bits of major above 8 bits of minor, then the rest of the minor.
    const major = (device >> 8) & 0xfff;
    const minor = (device & 0xff) | ((device >> 12) & 0xfff00);
    const name = basename(probe.readLink(`/sys/dev/block/${major}:${minor}`));
    return /^data=/m.test(probe.readText(`/proc/fs/ext4/${name}/options`));
  } catch {
    return undefined;
  }
}
