import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { nodeFsOps } from '@kube-provisioner/safe-fs';
import { describe, expect, it } from 'vitest';
import type { NfsExportConfig } from '../src/export-list.ts';
import type { StatFs } from '../src/export-placement.ts';
import { claim, context, provisioned, provisionOptions, released, storageClass } from './fixtures.ts';
import { gi, twoExports } from './several-exports-fixtures.ts';

/**
 * Export `b` that can hang, as a hard mount whose server is gone: while hung, its statfs and every
 * file call below its mount wait until `answer()`; the file calls made meanwhile are counted.
 */
function hangingB(exports: readonly NfsExportConfig[]) {
  const mountB = `${exports[1]?.mountRoot}`;
  let gate: { promise: Promise<void>; resolve: () => void } | undefined;
  let pendingStatfs: Promise<unknown> = Promise.resolve();
  const calls: string[] = [];
  const statfs: StatFs = async (path) => {
    if (path === mountB && gate !== undefined) await gate.promise;
    const bytes = path === mountB ? 5 * gi : 1 * gi;
    return { bsize: 4096, blocks: (2 * bytes) / 4096, bavail: bytes / 4096 };
  };
  const fs = new Proxy(nodeFsOps, {
    get: (target, key, receiver) => {
      const value: unknown = Reflect.get(target, key, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (gate === undefined || typeof args[0] !== 'string' || !args[0].startsWith(mountB)) {
          return value.apply(target, args);
        }
        calls.push(String(key));
        return gate.promise.then(() => value.apply(target, args));
      };
    },
  });
  return {
    options: {
      fs,
      statfs: (path: string) => {
        const call = statfs(path);
        if (path === mountB) pendingStatfs = call;
        return call;
      },
      statfsTimeoutMs: 50,
    },
    calls,
    hang: () => {
      let resolve = (): void => {};
      const promise = new Promise<void>((r) => {
        resolve = r;
      });
      gate = { promise, resolve };
    },
    /** The server is back: what waited goes on; resolves once b's hung statfs has answered. */
    answer: async () => {
      gate?.resolve();
      gate = undefined;
      await pendingStatfs;
    },
  };
}

describe('a delete for an export that is down', () => {
  it('fails fast naming the export, without a call into its hung mount, and completes once it answers', async () => {
    let b: ReturnType<typeof hangingB> | undefined;
    const { dir, provisioner, mount } = await twoExports({}, (exports) => {
      b = hangingB(exports);
      return b.options;
    });
    await using _ = dir;
    if (b === undefined) throw new Error('no export b');
    const sc = storageClass({ onDelete: 'delete' });
    const options = provisionOptions(claim({ namespace: 'ns', name: 'db' }), sc);
    const pv = provisioned(await provisioner.provision(options, context));
    expect(pv.spec?.nfs?.path.startsWith('/srv/b/')).toBe(true);

    b.hang();
    // The maintenance run's statfs finds b down; b's maintenance is skipped, not waited for.
    await provisioner.maintain(context);
    await expect(provisioner.delete(released(pv, sc), context)).rejects.toThrow(
      'export b (nfs.example.com:/srv/b) is unavailable: its statfs from an earlier check has not answered yet; the delete is retried until it is available',
    );
    expect(b.calls).toEqual([]);

    // The server is back: the next check (here the maintenance run's) sees it, and the retry deletes.
    await b.answer();
    await provisioner.maintain(context);
    await provisioner.delete(released(pv, sc), context);
    expect(existsSync(join(mount('b'), `ns-db-${options.pvName}`))).toBe(false);
  });

  it('fails with the reason of a failed statfs, asking the export again at each retry', async () => {
    const free: Record<string, number> = { a: 1 * gi, b: 5 * gi };
    const { dir, provisioner, mount } = await twoExports(free);
    await using _ = dir;
    const sc = storageClass({ onDelete: 'delete' });
    const options = provisionOptions(claim({ namespace: 'ns', name: 'db' }), sc);
    const pv = provisioned(await provisioner.provision(options, context));
    expect(pv.spec?.nfs?.path.startsWith('/srv/b/')).toBe(true);

    delete free.b;
    await provisioner.maintain(context);
    await expect(provisioner.delete(released(pv, sc), context)).rejects.toThrow(
      /^export b \(nfs\.example\.com:\/srv\/b\) is unavailable: EIO: i\/o error, statfs .*; the delete is retried until it is available$/,
    );
    expect(existsSync(join(mount('b'), `ns-db-${options.pvName}`))).toBe(true);

    free.b = 5 * gi;
    await provisioner.delete(released(pv, sc), context);
    expect(existsSync(join(mount('b'), `ns-db-${options.pvName}`))).toBe(false);
  });

  it('leaves the deletes of a healthy export alone while another export is down', async () => {
    let b: ReturnType<typeof hangingB> | undefined;
    const { dir, provisioner, mount } = await twoExports({}, (exports) => {
      b = hangingB(exports);
      return b.options;
    });
    await using _ = dir;
    if (b === undefined) throw new Error('no export b');
    const sc = storageClass({ onDelete: 'delete', exports: 'a' });
    const options = provisionOptions(claim({ namespace: 'ns', name: 'db' }), sc);
    const pv = provisioned(await provisioner.provision(options, context));

    b.hang();
    await provisioner.maintain(context);
    await provisioner.delete(released(pv, sc), context);

    expect(existsSync(join(mount('a'), `ns-db-${options.pvName}`))).toBe(false);
    await b.answer();
  });
});
