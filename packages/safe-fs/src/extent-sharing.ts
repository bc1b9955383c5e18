/**
 * Sharing a file's extents with its copy (a reflink) where the file system can (XFS with `reflink=1`,
 * btrfs): the copy costs no data blocks until either side is written, and takes one call whatever the
 * size. Node.js reaches the `FICLONE` ioctl only through `copyFile` with `COPYFILE_FICLONE_FORCE`, and
 * `copyFile` takes paths: both ends are given as `/proc/self/fd/<fd>` of descriptors the copy already
 * opened and checked, which name those very inodes, never a name a workload could swap. `FORCE`
 * matters: it either clones or fails, while plain `COPYFILE_FICLONE` falls back to libuv's
 * `sendfile` loop, the one that spins on a source truncated mid-copy (`copy-file.ts`).
 *
 * What libuv does around the ioctl, on those paths: opens the source read-only and the target
 * `O_WRONLY | O_CREAT` (it exists: the open reuses it), truncates the target (empty already), sets
 * its mode to the source's (the copy is then given its owner and mode as any copy; until then it lies
 * in the copy's private `0700` directories), and on failure tries to unlink the target's path,
 * which `/proc` refuses: the file stays for the byte copy to fill.
 */

import { constants } from 'node:fs';
import { copyFile, type FileHandle } from 'node:fs/promises';
import { errnoCode, systemError } from './errors.ts';

/**
 * Whether a copy shares file extents where it can (`auto`, the default, as `cp --reflink=auto`) or
 * always copies the bytes (`never`).
 */
export type ReflinkPolicy = 'auto' | 'never';

/** The file system cannot share extents here (or not between these two): copy the bytes. */
const unsupportedCodes: ReadonlySet<string> = new Set(['EOPNOTSUPP', 'ENOTSUP', 'ENOTTY', 'ENOSYS', 'EXDEV']);

/**
 * This file cannot be shared (an active swap file, a DAX or realtime file, one the file system
 * refuses to clone): copy its bytes, and still try the next file.
 */
const fileRefusedCodes: ReadonlySet<string> = new Set(['EINVAL', 'ETXTBSY', 'EPERM']);

/** What one clone call came to. */
type CloneOutcome = 'cloned' | 'file-refused' | 'unsupported';

/**
 * The extent sharing of one copy: the first file of each source device is the probe, files of that
 * device meanwhile wait for its answer, and a device that cannot share is not tried again by this
 * copy. Kept per copy, not per process, so a device number reused by another mount is probed afresh.
 */
export class ExtentSharing {
  readonly #policy: ReflinkPolicy;
  /** Per source device: whether clones are worth trying, once its first clone has answered. */
  readonly #probes = new Map<number, Promise<boolean>>();

  constructor(policy: ReflinkPolicy = 'auto') {
    this.#policy = policy;
  }

  /**
   * Makes `to` (empty, open for writing) share all of `from`'s extents, its size and holes included,
   * in one atomic call: a source truncated or growing meanwhile is cloned as it is at that instant.
   *
   * @param device the source's `st_dev`, the key of what was learnt about sharing.
   * @param path the copy's path below the base, for errors.
   * @returns false, with `to` still empty, when the bytes must be copied instead.
   * @throws {@link SafeFsError} for any other failure of the clone (`EIO`, `ENOSPC`, `EDQUOT`...).
   */
  async share(from: FileHandle, to: FileHandle, device: number, path: string): Promise<boolean> {
    if (this.#policy === 'never') return false;
    const probe = this.#probes.get(device);
    if (probe !== undefined && !(await probe)) return false;
    const outcome = clone(from, to, path);
    if (probe === undefined) {
      // Any answer but "unsupported" is about this file alone: the next one tries again.
      this.#probes.set(
        device,
        outcome.then(
          (answer) => answer !== 'unsupported',
          () => true,
        ),
      );
    } else if ((await outcome) === 'unsupported') {
      this.#probes.set(device, Promise.resolve(false));
    }
    return (await outcome) === 'cloned';
  }
}

async function clone(from: FileHandle, to: FileHandle, path: string): Promise<CloneOutcome> {
  try {
    await copyFile(`/proc/self/fd/${from.fd}`, `/proc/self/fd/${to.fd}`, constants.COPYFILE_FICLONE_FORCE);
    return 'cloned';
  } catch (err) {
    const code = errnoCode(err) ?? '';
    if (unsupportedCodes.has(code)) return 'unsupported';
    if (fileRefusedCodes.has(code)) return 'file-refused';
    throw systemError(err, 'ficlone', path);
  }
}
