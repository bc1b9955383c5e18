import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { nodeFsOps } from '@kube-provisioner/safe-fs';
import type { V1PersistentVolume } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import {
  claim,
  context,
  failed,
  nfsProvisioner,
  provisioned,
  provisionOptions,
  released,
  storageClass,
  temporaryRoot,
  tree,
} from './fixtures.ts';
import { gi, twoExports } from './several-exports-fixtures.ts';

describe('placement on several exports', () => {
  it('places a volume on the export with the most free bytes, and names that export in the PV', async () => {
    const { dir, provisioner, mount } = await twoExports({ a: 2 * gi, b: 5 * gi });
    await using _ = dir;
    const options = provisionOptions(claim({ namespace: 'ns', name: 'db' }));
    const pv = provisioned(await provisioner.provision(options, context));

    expect(pv.spec?.nfs).toEqual({
      server: 'nfs.example.com',
      path: `/srv/b/ns-db-${options.pvName}`,
      readOnly: false,
    });
    expect(await tree(mount('b'))).toContain(`ns-db-${options.pvName}`);
    expect(await tree(mount('a'))).toEqual([]);
  });

  it('breaks a tie by name: the first in sort order', async () => {
    const { dir, provisioner } = await twoExports({ a: 3 * gi, b: 3 * gi });
    await using _ = dir;
    const pv = provisioned(await provisioner.provision(provisionOptions(claim()), context));
    expect(pv.spec?.nfs?.path.startsWith('/srv/a/')).toBe(true);
  });

  it('leaves out an export whose free space cannot be read', async () => {
    const { dir, provisioner } = await twoExports({ a: 1 * gi });
    await using _ = dir;
    const pv = provisioned(await provisioner.provision(provisionOptions(claim()), context));
    expect(pv.spec?.nfs?.path.startsWith('/srv/a/')).toBe(true);
  });

  it('leaves out an export whose statfs does not answer in time, asking its hung mount only once', async () => {
    const asked: string[] = [];
    const { dir, provisioner } = await twoExports({}, (exports) => ({
      // a answers; b's server is gone and its mount hangs.
      statfs: (path) => {
        asked.push(path === exports[0]?.mountRoot ? 'a' : 'b');
        return path === exports[0]?.mountRoot
          ? Promise.resolve({ bsize: 4096, blocks: 1024, bavail: 512 })
          : new Promise(() => {});
      },
      statfsTimeoutMs: 50,
    }));
    await using _ = dir;
    for (const name of ['one', 'two']) {
      const options = provisionOptions(claim({ name, storage: '1Mi' }));
      const pv = provisioned(await provisioner.provision(options, context));
      expect(pv.spec?.nfs?.path.startsWith('/srv/a/')).toBe(true);
    }
    // Each call into a hung mount holds a thread of the pool until it answers.
    expect(asked.sort()).toEqual(['a', 'a', 'b']);
  });

  it('leaves out an export whose record lookup does not answer in time', async () => {
    const { dir, provisioner } = await twoExports({ a: 1 * gi }, (exports) => {
      const hung = `${exports[1]?.mountRoot}`;
      // Every call on b's mount hangs, as on a mount whose server is gone (its statfs fails).
      const fs = new Proxy(nodeFsOps, {
        get: (target, key, receiver) => {
          const value: unknown = Reflect.get(target, key, receiver);
          if (typeof value !== 'function') return value;
          return (...args: unknown[]) =>
            typeof args[0] === 'string' && args[0].startsWith(hung)
              ? new Promise(() => {})
              : value.apply(target, args);
        },
      });
      return { fs, statfsTimeoutMs: 50 };
    });
    await using _ = dir;
    const pv = provisioned(await provisioner.provision(provisionOptions(claim()), context));
    expect(pv.spec?.nfs?.path.startsWith('/srv/a/')).toBe(true);
  });

  it('places only on the exports the class names, even when another has more room', async () => {
    const { dir, provisioner, mount } = await twoExports({ a: 2 * gi, b: 9 * gi });
    await using _ = dir;
    const sc = storageClass({ exports: 'a', onDelete: 'delete' });
    const pv = provisioned(await provisioner.provision(provisionOptions(claim(), sc), context));

    expect(pv.spec?.nfs?.path.startsWith('/srv/a/')).toBe(true);
    expect(await tree(mount('b'))).toEqual([]);
  });

  it('refuses a class naming an unknown export, listing the exports served', async () => {
    const { dir, provisioner, mount } = await twoExports({ a: 2 * gi, b: 2 * gi });
    await using _ = dir;
    const sc = storageClass({ exports: 'a, c' });
    const error = failed(await provisioner.provision(provisionOptions(claim(), sc), context), true);

    expect(error.message).toContain('unknown export c; this provisioner serves the exports a, b');
    expect([...(await tree(mount('a'))), ...(await tree(mount('b')))]).toEqual([]);
  });

  it('fails a claim larger than every export can hold, naming their free space, and creates no directory', async () => {
    const { dir, provisioner, mount } = await twoExports({ a: 2 * gi, b: 3 * gi });
    await using _ = dir;
    const result = await provisioner.provision(provisionOptions(claim({ storage: '4Gi' })), context);
    const error = failed(result, false);

    expect(error.message).toBe(
      `no export of this class can hold the requested ${4 * gi} bytes: a has ${2 * gi} bytes free, b has ${3 * gi} bytes free; no directory was created`,
    );
    expect([...(await tree(mount('a'))), ...(await tree(mount('b')))]).toEqual([]);
  });

  it('puts a retried claim on the export already holding its directory, whatever the free space now', async () => {
    const free = { a: 5 * gi, b: 2 * gi };
    const { dir, provisioner } = await twoExports(free);
    await using _ = dir;
    const options = provisionOptions(claim());
    const first = provisioned(await provisioner.provision(options, context));
    free.b = 9 * gi;
    const again = provisioned(await provisioner.provision(options, context));

    expect(first.spec?.nfs?.path.startsWith('/srv/a/')).toBe(true);
    expect(again.spec?.nfs).toEqual(first.spec?.nfs);
  });
});

describe('the exports class parameter with one export', () => {
  it('is an unknown parameter without NFS_EXPORTS, as upstream', async () => {
    await using root = await temporaryRoot();
    const sc = storageClass({ exports: 'a' });
    const result = await nfsProvisioner('nfs-subdir', root.path).provision(
      provisionOptions(claim(), sc),
      context,
    );
    expect(failed(result, true).message).toContain('unknown parameter "exports"');
    expect(await tree(root.path)).toEqual([]);
  });
});

describe('routing by the PV on several exports', () => {
  it('deletes the directory on the export the PV names, leaving the other export alone', async () => {
    const { dir, provisioner, mount } = await twoExports({ a: 2 * gi, b: 5 * gi });
    await using _ = dir;
    const sc = storageClass({ onDelete: 'delete' });
    const options = provisionOptions(claim({ namespace: 'ns', name: 'db' }), sc);
    const pv = provisioned(await provisioner.provision(options, context));
    // The same directory name on the other export must survive.
    await mkdir(join(mount('a'), `ns-db-${options.pvName}`));

    await provisioner.delete(released(pv, sc), context);

    expect(existsSync(join(mount('b'), `ns-db-${options.pvName}`))).toBe(false);
    expect(existsSync(join(mount('a'), `ns-db-${options.pvName}`))).toBe(true);
  });

  it('refuses a PV below none of its exports, naming them, and touches nothing', async () => {
    const { dir, provisioner, mount } = await twoExports({ a: 2 * gi, b: 5 * gi });
    await using _ = dir;
    await mkdir(join(mount('a'), 'x'));
    const foreign = (server: string, path: string): V1PersistentVolume =>
      released(
        { metadata: { name: 'pv-x' }, spec: { nfs: { server, path } } },
        storageClass({ onDelete: 'delete' }),
      );
    const before = await tree(dir.path);

    for (const pv of [foreign('other.example.com', '/srv/a/x'), foreign('nfs.example.com', '/srv/ab/x')]) {
      await expect(provisioner.delete(pv, context)).rejects.toThrow(
        `below none of this provisioner's exports a (nfs.example.com:/srv/a), b (nfs.example.com:/srv/b); refusing to touch anything`,
      );
      await expect(
        provisioner.expand({ pv, pvc: claim(), storageClass: storageClass(), capacity: '2Gi' }),
      ).rejects.toThrow('refusing to touch anything');
    }
    expect(await tree(dir.path)).toEqual(before);
  });

  it('expands a volume of either export (recorded only)', async () => {
    const { dir, provisioner } = await twoExports({ a: 2 * gi, b: 5 * gi });
    await using _ = dir;
    const pv = provisioned(await provisioner.provision(provisionOptions(claim()), context));
    const result = await provisioner.expand({
      pv,
      pvc: claim(),
      storageClass: storageClass(),
      capacity: '2Gi',
    });
    expect(result).toEqual({ capacity: '2Gi' });
  });
});
