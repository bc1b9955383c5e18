/**
 * What the tests of walks over wide and deep trees share: scratch space in memory, trees made fast
 * (deep ones through descriptors, past PATH_MAX), and `FsOps` tables that measure a walk from inside
 * its own calls — the live heap after a full collection, or its calls and open descriptors.
 */
import { closeSync, constants, existsSync, mkdirSync, openSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { type FsOps, localFsOps } from '../../src/index.ts';

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

/** A new directory in memory (`/dev/shm`) where there is one: only the walks' own cost is measured. */
export function scratchDirectory(): Promise<string> {
  return mkdtemp(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'safe-fs-'));
}

/** Creates `count` empty files with 155-byte names in `dir` (which must exist). */
export function fillEmptyFiles(dir: string, count: number): void {
  const prefix = 'f'.repeat(150);
  for (let index = 0; index < count; index++) {
    closeSync(openSync(join(dir, `${prefix}${index}`), constants.O_CREAT | constants.O_WRONLY, 0o644));
  }
}

/**
 * Nests `depth` directories `d` below `top`, calling `eachLevel` with each level's descriptor path
 * before it goes down; returns the bottom level's descriptor, which the caller closes.
 */
export function nestDirectories(top: string, depth: number, eachLevel?: (level: string) => void): number {
  let fd = openSync(top, constants.O_DIRECTORY);
  for (let level = 0; level < depth; level++) {
    eachLevel?.(`/proc/self/fd/${fd}`);
    mkdirSync(`/proc/self/fd/${fd}/d`);
    const next = openSync(`/proc/self/fd/${fd}/d`, constants.O_DIRECTORY);
    closeSync(fd);
    fd = next;
  }
  return fd;
}

/** Creates an empty file `name` in the directory at `dir`. */
export function touch(dir: string, name: string): void {
  closeSync(openSync(`${dir}/${name}`, constants.O_CREAT | constants.O_WRONLY, 0o644));
}

/** A table sampling the live heap at the `sampleFirst` first and every `sampleEvery`-th `lstat`/`fstat`. */
export interface HeapSampling {
  readonly fs: FsOps;
  /** The largest live heap seen, less the heap when sampling began, in bytes. */
  growth(): number;
  /** The most names one `readdir` or listing read handed out. */
  largestListing(): number;
}

/** `localFsOps` (the fastest calls; the walks are the same) sampling the live heap as it is called. */
export function heapSampling(sampleEvery: number, sampleFirst = 0): HeapSampling {
  collectGarbage();
  const baseline = process.memoryUsage().heapUsed;
  let peak = baseline;
  let calls = 0;
  let largest = 0;
  const sample = () => {
    if (++calls <= sampleFirst || calls % sampleEvery === 0) {
      collectGarbage();
      peak = Math.max(peak, process.memoryUsage().heapUsed);
    }
  };
  const listed = (names: Buffer[]) => {
    largest = Math.max(largest, names.length);
    return names;
  };
  return {
    fs: {
      ...localFsOps,
      lstat: (at) => {
        sample();
        return localFsOps.lstat(at);
      },
      fstat: (handle) => {
        sample();
        return localFsOps.fstat(handle);
      },
      readdir: async (at) => listed(await localFsOps.readdir(at)),
      opendir: async (at, batchSize) => {
        const listing = await localFsOps.opendir(at, batchSize);
        return { read: async () => listed(await listing.read()), close: () => listing.close() };
      },
    },
    growth: () => peak - baseline,
    largestListing: () => largest,
  };
}

/** A table counting its calls and the descriptors (directories, listings, files) held at once. */
export interface CallCounting {
  readonly fs: FsOps;
  calls: number;
  open: number;
  maxOpen: number;
}

/** `localFsOps` counting its calls and the most descriptors it held at once. */
export function callCounting(): CallCounting {
  const counts = { calls: 0, open: 0, maxOpen: 0 };
  const opened = () => {
    counts.open++;
    counts.maxOpen = Math.max(counts.maxOpen, counts.open);
  };
  const closer = (close: () => Promise<void>) => {
    let closed = false;
    return async () => {
      if (!closed) counts.open--;
      closed = true;
      await close();
    };
  };
  const count =
    <A extends unknown[], R>(fn: (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> => {
      counts.calls++;
      return fn(...args);
    };
  const fs: FsOps = {
    ...Object.fromEntries(Object.entries(localFsOps).map(([name, fn]) => [name, count(fn)])),
    open: async (path, flags, mode) => {
      counts.calls++;
      const file = await localFsOps.open(path, flags, mode);
      opened();
      return {
        get fd() {
          return file.fd;
        },
        stat: () => file.stat(),
        chmod: (mode) => file.chmod(mode),
        chown: (uid, gid) => file.chown(uid, gid),
        readFile: (encoding) => file.readFile(encoding),
        writeFile: (data) => file.writeFile(data),
        datasync: () => file.datasync(),
        close: closer(() => file.close()),
      };
    },
    opendir: async (path, batchSize) => {
      counts.calls++;
      const listing = await localFsOps.opendir(path, batchSize);
      opened();
      return {
        read: () => {
          counts.calls++;
          return listing.read();
        },
        close: closer(() => listing.close()),
      };
    },
  } as FsOps;
  return Object.assign(counts, { fs });
}
