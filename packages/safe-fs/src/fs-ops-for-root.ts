/**
 * Which {@link FsOps} a root gets: calls on the event loop's own thread ({@link localFsOps}) only
 * when the root is on a file system of this machine's own disks or memory, where a call cannot hang
 * on a remote server; libuv's thread pool ({@link nodeFsOps}) otherwise, and whenever the file
 * system cannot be told.
 */
import { statfsSync } from 'node:fs';
import { type FsOps, localFsOps, nodeFsOps } from './fs-ops.ts';

/** `statfs(2)` magic numbers (linux/magic.h) of local file systems. */
const localFileSystems: ReadonlyMap<number, string> = new Map([
  [0xef53, 'ext4'],
  [0x58465342, 'xfs'],
  [0x9123683e, 'btrfs'],
  [0x01021994, 'tmpfs'],
  [0x858458f6, 'ramfs'],
  [0x794c7630, 'overlay'],
  [0x2fc12fc1, 'zfs'],
  [0xf2f52010, 'f2fs'],
]);

/** The calls chosen for a root, and why. */
export interface RootFsOps {
  readonly ops: FsOps;
  /** `local` for {@link localFsOps}, `thread-pool` for {@link nodeFsOps}. */
  readonly calls: 'local' | 'thread-pool';
  /** The file system's name, its magic number in hex when not a known local one, or why it is unknown. */
  readonly fileSystem: string;
}

/** The calls for the root at `base` (an absolute path), by its file system type. */
export function fsOpsForRoot(base: string, statfs: typeof statfsSync = statfsSync): RootFsOps {
  let type: number;
  try {
    type = statfs(base).type;
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    return { ops: nodeFsOps, calls: 'thread-pool', fileSystem: `unknown (${String(code ?? err)})` };
  }
  const local = localFileSystems.get(type);
  return local === undefined
    ? { ops: nodeFsOps, calls: 'thread-pool', fileSystem: `0x${type.toString(16)}` }
    : { ops: localFsOps, calls: 'local', fileSystem: local };
}
