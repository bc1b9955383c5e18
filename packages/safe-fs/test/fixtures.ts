import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import type { VolumeOwner } from '../src/index.ts';

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
