import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { ProvisionController } from '@kube-provisioner/controller';
import { resources } from '@kube-provisioner/controller/client';
import { silentLogger } from '@kube-provisioner/controller/logging';
import { FakeKubeApi } from '@kube-provisioner/controller/testing';
import { annStorageProvisioner } from '@kube-provisioner/controller/wire-names';
import { nodeFsOps } from '@kube-provisioner/safe-fs';
import type { V1PersistentVolume, V1StorageClass } from '@kubernetes/client-node';
import { describe, expect, it, vi } from 'vitest';
import {
  claim,
  context,
  failed,
  nfsProvisioner,
  provisioned,
  provisionerName,
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

  it("places by the exports' weights with placement: weighted, whatever their free space", async () => {
    const { dir, provisioner } = await twoExports({ a: 9 * gi, b: 2 * gi }, (exports) => ({
      exports: exports.map((e) => (e.name === 'b' ? { ...e, weight: 3 } : e)),
    }));
    await using _ = dir;
    const sc = storageClass({ placement: 'weighted' });
    const placed: string[] = [];
    for (const name of ['one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight']) {
      const options = provisionOptions(claim({ name, uid: `uid-${name}` }), sc);
      const pv = provisioned(await provisioner.provision(options, context));
      placed.push(pv.spec?.nfs?.path.split('/')[2] ?? '');
    }
    expect(placed).toEqual(['b', 'a', 'b', 'b', 'b', 'a', 'b', 'b']);
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

describe('a class selecting exports by label and placing round-robin, under ProvisionController', () => {
  it('takes turns among the exports its selector matches, whatever their free space, skipping one while it is down', async () => {
    const free: Record<string, number> = { a: 2 * gi, b: 9 * gi };
    const api = new FakeKubeApi();
    const labels: Record<string, Record<string, string>> = { a: { disk: 'ssd' }, b: { disk: 'nvme' } };
    const { dir, provisioner, mount } = await twoExports(free, (exports) => ({
      exports: exports.map((e) => ({ ...e, labels: labels[e.name] ?? {} })),
      classes: api.resource(resources.storageClasses),
    }));
    await using _ = dir;
    const namedClass = (name: string, parameters: Record<string, string>): V1StorageClass => ({
      ...storageClass(parameters),
      apiVersion: 'storage.k8s.io/v1',
      kind: 'StorageClass',
      metadata: { name },
    });
    api.seed(
      resources.storageClasses,
      namedClass('turns', { exportSelector: 'disk in (ssd, nvme)', placement: 'round-robin' }),
    );
    api.seed(resources.storageClasses, namedClass('spinning', { exportSelector: 'disk=hdd' }));
    const controller = new ProvisionController({
      api,
      provisionerName,
      provisioner,
      leaderElection: false,
      logger: silentLogger,
    });
    const stop = new AbortController();
    const done = controller.run(stop.signal);
    const eventually = <T>(check: () => T): Promise<T> => vi.waitFor(check, { timeout: 5000, interval: 10 });
    /** The export the volume of a new claim `name` of class `className` went to. */
    const provisionClaim = async (name: string, className = 'turns'): Promise<string> => {
      const pvc = claim({
        name,
        uid: `uid-${name}`,
        annotations: { [annStorageProvisioner]: provisionerName },
      });
      api.seed(resources.persistentVolumeClaims, {
        ...pvc,
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        spec: { ...pvc.spec, storageClassName: className },
      });
      const pv = await eventually(() => {
        const found = api
          .objects(resources.persistentVolumes)
          .find((v) => v.spec?.claimRef?.uid === `uid-${name}`);
        expect(found).toBeDefined();
        return found as V1PersistentVolume;
      });
      const [, , exportName = '', directory = ''] = pv.spec?.nfs?.path.split('/') ?? [];
      expect(existsSync(join(mount(exportName), directory))).toBe(true);
      return exportName;
    };
    try {
      // Most free space would put every one on b.
      const placed = [
        await provisionClaim('one'),
        await provisionClaim('two'),
        await provisionClaim('three'),
      ];
      delete free.b;
      placed.push(await provisionClaim('four'));
      free.b = 9 * gi;
      placed.push(await provisionClaim('five'));
      expect(placed).toEqual(['a', 'b', 'a', 'a', 'b']);

      const pvc = claim({
        name: 'six',
        uid: 'uid-six',
        annotations: { [annStorageProvisioner]: provisionerName },
      });
      api.seed(resources.persistentVolumeClaims, {
        ...pvc,
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        spec: { ...pvc.spec, storageClassName: 'spinning' },
      });
      await eventually(() =>
        expect(
          api
            .objects(resources.events)
            .filter((event) => event.involvedObject?.uid === 'uid-six')
            .map((event) => `${event.reason}: ${event.message}`),
        ).toContainEqual(
          expect.stringMatching(
            /^ProvisioningFailed: .*the StorageClass selects no export: "exportSelector" "disk=hdd" matches none of the exports; the exports and their labels: a \{"disk":"ssd"\}, b \{"disk":"nvme"\}$/u,
          ),
        ),
      );
      expect(api.objects(resources.persistentVolumes)).toHaveLength(5);
    } finally {
      stop.abort();
      await done;
    }
  });
});

describe('the several-exports class parameters with one export', () => {
  it.each([
    ['exports', 'a'],
    ['exportSelector', 'disk=ssd'],
    ['placement', 'round-robin'],
  ])('%s is an unknown parameter without NFS_EXPORTS, as upstream', async (parameter, value) => {
    await using root = await temporaryRoot();
    const sc = storageClass({ [parameter]: value });
    const result = await nfsProvisioner('nfs-subdir', root.path).provision(
      provisionOptions(claim(), sc),
      context,
    );
    expect(failed(result, true).message).toContain(`unknown parameter "${parameter}"`);
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
