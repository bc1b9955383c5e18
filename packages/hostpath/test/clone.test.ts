import { chmod, link, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ProvisionOptions, ProvisionResult } from '@kube-provisioner/controller';
import { ApiError } from '@kube-provisioner/controller/client';
import { type CloneSourceAccess, finalizerCloningProtection } from '@kube-provisioner/controller/clone';
import type { V1PersistentVolume, V1PersistentVolumeClaim, V1StorageClass } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { defaultProvisionerName, HostPathProvisioner } from '../src/hostpath-provisioner.ts';
import {
  claim,
  context,
  failed,
  provisioned,
  provisionOptions,
  storageClass,
  temporaryRoot,
} from './fixtures.ts';

const notFound = () => new ApiError(404, 'not found', { reason: 'NotFound' });

/** A fake API holding the Bound source claim and its PV, remembering every claim patch. */
function api(source: V1PersistentVolumeClaim, pv: V1PersistentVolume) {
  const patches: unknown[] = [];
  const access: CloneSourceAccess = {
    claims: {
      async get(name) {
        if (name !== source.metadata?.name) throw notFound();
        return source;
      },
      async patch(_name, patch) {
        patches.push(patch);
        return source;
      },
    },
    volumes: {
      async get(name) {
        if (name !== pv.metadata?.name) throw notFound();
        return pv;
      },
    },
  };
  return { access, patches };
}

function hostpath(root: string, node?: string, clones?: CloneSourceAccess): HostPathProvisioner {
  const mode = node === undefined ? 'shared' : 'per-node';
  return new HostPathProvisioner({ mode, root, nodeName: node, clones });
}

/** Provisions source claim `src` on `root` (on `node` in per-node mode) and returns it Bound. */
async function boundSource(root: string, node?: string) {
  const pvc = claim({ name: 'src', node });
  const options = provisionOptions(pvc);
  const pv = provisioned(await hostpath(root, node).provision(options, context));
  const bound = { ...pvc, spec: { ...pvc.spec, volumeName: options.pvName }, status: { phase: 'Bound' } };
  const annotations = {
    ...pv.metadata?.annotations,
    'pv.kubernetes.io/provisioned-by': defaultProvisionerName,
  };
  return {
    bound,
    pv: { ...pv, metadata: { ...pv.metadata, annotations } },
    dir: pv.spec?.hostPath?.path ?? '',
  };
}

function cloneOptions(sc: V1StorageClass = storageClass(), node?: string): ProvisionOptions {
  return {
    ...provisionOptions(claim({ name: 'copy', node }), sc),
    dataSource: { apiGroup: '', kind: 'PersistentVolumeClaim', name: 'src', namespace: 'team-a' },
  };
}

/** Calls `provision` until it stops answering Background. */
async function untilFinished(call: () => Promise<ProvisionResult>): Promise<ProvisionResult> {
  for (;;) {
    const result = await call();
    if (!('error' in result) || result.state !== 'Background') return result;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe('cloning a claim on a hostpath root', () => {
  it('copies the source tree (files, hard links, modes) into a new volume, protecting the source meanwhile', async () => {
    await using root = await temporaryRoot();
    const { bound, pv, dir } = await boundSource(root.path);
    await mkdir(join(dir, 'sub'));
    await writeFile(join(dir, 'sub/a.txt'), 'alpha');
    await link(join(dir, 'sub/a.txt'), join(dir, 'b.txt'));
    await chmod(join(dir, 'sub'), 0o750);
    const fake = api(bound, pv);
    const provisioner = hostpath(root.path, undefined, fake.access);
    const options = cloneOptions();

    const copy = provisioned(await untilFinished(() => provisioner.provision(options, context)));

    const copyDir = copy.spec?.hostPath?.path ?? '';
    expect(copyDir).not.toBe(dir);
    expect(await readFile(join(copyDir, 'sub/a.txt'), 'utf8')).toBe('alpha');
    expect((await stat(join(copyDir, 'b.txt'))).ino).toBe((await stat(join(copyDir, 'sub/a.txt'))).ino);
    expect((await stat(join(copyDir, 'sub'))).mode & 0o777).toBe(0o750);
    expect(fake.patches).toEqual([
      { metadata: { finalizers: [finalizerCloningProtection] } },
      { metadata: { '$deleteFromPrimitiveList/finalizers': [finalizerCloningProtection] } },
    ]);
    expect(provisioner.dataSources).toEqual([{ apiGroup: '', kind: 'PersistentVolumeClaim' }]);
  });

  it('refuses, in per-node mode, a source on another node, naming it', async () => {
    await using root = await temporaryRoot();
    const { bound, pv } = await boundSource(root.path, 'node-a');
    const fake = api(bound, pv);

    const result = await hostpath(root.path, 'node-b', fake.access).provision(
      cloneOptions(storageClass(), 'node-b'),
      context,
    );

    expect(failed(result, true).message).toContain(
      `the source volume ${pv.metadata?.name} is on node node-a, not node-b`,
    );
    expect(fake.patches).toEqual([]);
  });

  it('refuses a source outside its root', async () => {
    await using root = await temporaryRoot();
    await using other = await temporaryRoot();
    const { bound, pv } = await boundSource(other.path);
    const fake = api(bound, pv);

    const result = await hostpath(root.path, undefined, fake.access).provision(cloneOptions(), context);

    expect(failed(result, true).message).toContain(`is not a directory under ${root.path}`);
    expect(fake.patches).toEqual([]);
  });

  it('refuses a clone into a class that enforces sizes, before anything is written', async () => {
    await using root = await temporaryRoot();
    const { bound, pv } = await boundSource(root.path);
    const fake = api(bound, pv);

    const result = await hostpath(root.path, undefined, fake.access).provision(
      cloneOptions(storageClass({ enforceSize: 'true' })),
      context,
    );

    expect(failed(result, true).message).toContain(
      'cloning into a StorageClass with "enforceSize" is not supported',
    );
    expect(fake.patches).toEqual([]);
  });

  it('declares no data source without access to clone sources', () => {
    expect(new HostPathProvisioner({ mode: 'shared', root: '/srv/volumes' }).dataSources).toEqual([]);
  });
});
