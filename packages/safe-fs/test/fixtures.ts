import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { type FsOps, nodeFsOps, type SafeFsError, type VolumeOwner } from '../src/index.ts';

/** A fresh temporary directory per call, removed after the test. */
export function useTempDirs(): () => Promise<string> {
  const created: string[] = [];
  afterEach(async () => {
    await Promise.all(created.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
  });
  return async () => {
    const dir = await mkdtemp(join(tmpdir(), 'safe-fs-'));
    created.push(dir);
    return dir;
  };
}

/** An owner for claim `name` in `namespace`, with a UID and PV name derived from `uid`. */
export function ownerOf(namespace: string, name: string, uid: string): VolumeOwner {
  return { claimUid: uid, namespace, claimName: name, pvName: `pvc-${uid}`, provisioner: 'example.com/test' };
}

/** A Node.js-style system error, as `node:fs` would reject with. */
export function systemErrorOf(code: string, errno: number, syscall: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: ${syscall}`), { code, errno, syscall });
}

/** The error `promise` rejects with; fails the test when it resolves. */
export async function rejection(promise: Promise<unknown>): Promise<SafeFsError> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (reason: unknown) => reason as SafeFsError,
  );
}

/**
 * System calls that each wait a number of event-loop turns taken from `delays`, so concurrent
 * operations interleave differently on every run; every interleaving of whole calls is reachable.
 */
export function interleaving(delays: readonly number[]): FsOps {
  let call = 0;
  const pause = async () => {
    const turns = delays[call++ % delays.length] ?? 0;
    for (let turn = 0; turn < turns; turn++) await new Promise((resolve) => setImmediate(resolve));
  };
  const delayed = Object.entries(nodeFsOps).map(([name, fn]) => [
    name,
    async (...args: unknown[]) => {
      await pause();
      return (fn as (...a: unknown[]) => Promise<unknown>)(...args);
    },
  ]);
  return Object.fromEntries(delayed) as FsOps;
}
