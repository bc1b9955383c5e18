// biome-ignore-all lint/suspicious/noTemplateCurlyInString: pathPattern placeholders are literal text, not JS templates
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ProvisionOptions, ProvisionResult } from '@kube-provisioner/controller';
import { ApiError } from '@kube-provisioner/controller/client';
import {
  type CloneCopyOptions,
  CloneJobs,
  type CloneSourceAccess,
  finalizerCloningProtection,
} from '@kube-provisioner/controller/clone';
import {
  type CloneVolumeOptions,
  type FsOps,
  nodeFsOps,
  parseRelativeVolumePath,
  type RelativeVolumePath,
  VolumeRoot,
} from '@kube-provisioner/safe-fs';
import type { V1PersistentVolume, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import {
  claim,
  context,
  failed,
  nfsProvisioner,
  provisioned,
  provisionerName,
  provisionOptions,
  storageClass,
  temporaryRoot,
} from './fixtures.ts';

type Patch = { name: string; patch: unknown };

/** A fake API holding `claims` and `volumes`, remembering every patch. */
function api(claims: V1PersistentVolumeClaim[], volumes: V1PersistentVolume[]) {
  const patches: Patch[] = [];
  const notFound = () => new ApiError(404, 'not found', { reason: 'NotFound' });
  const access: CloneSourceAccess = {
    claims: {
      async get(name, options) {
        const found = claims.find(
          (c) => c.metadata?.name === name && c.metadata.namespace === options?.namespace,
        );
        if (found === undefined) throw notFound();
        return found;
      },
      async patch(name, patch) {
        patches.push({ name, patch });
        return claims.find((c) => c.metadata?.name === name) ?? claim();
      },
    },
    volumes: {
      async get(name) {
        const found = volumes.find((v) => v.metadata?.name === name);
        if (found === undefined) throw notFound();
        return found;
      },
    },
  };
  return { access, patches, claims };
}

/** A provisioned, Bound source claim `src` of `team-a` holding `files` files. */
async function boundSource(root: string, files: number, size = '1Gi') {
  const provisioner = nfsProvisioner('nfs-subdir', root);
  const src = claim({ namespace: 'team-a', name: 'src', storage: size });
  const options = provisionOptions(src, storageClass());
  const pv = provisioned(await provisioner.provision(options, context));
  const dir = join(root, pv.spec?.nfs?.path.replace('/export/', '') ?? '');
  await mkdir(join(dir, 'sub'));
  for (let index = 0; index < files; index++) await writeFile(join(dir, 'sub', `f${index}`), `${index}`);
  const bound: V1PersistentVolumeClaim = {
    ...src,
    spec: { ...src.spec, volumeName: options.pvName },
    status: { phase: 'Bound' },
  };
  const boundPv: V1PersistentVolume = {
    ...pv,
    metadata: {
      ...pv.metadata,
      annotations: { ...pv.metadata?.annotations, 'pv.kubernetes.io/provisioned-by': provisionerName },
    },
  };
  return { bound, pv: boundPv, dir };
}

function cloneOptions(namespace = 'team-a', storage = '1Gi'): ProvisionOptions {
  const pvc = claim({ namespace, name: 'copy', storage });
  return {
    ...provisionOptions(pvc, storageClass()),
    dataSource: { apiGroup: '', kind: 'PersistentVolumeClaim', name: 'src', namespace: 'team-a' },
  };
}

/** Calls `provision` until it stops answering Background. */
async function untilFinished(call: () => Promise<ProvisionResult>): Promise<ProvisionResult[]> {
  const results: ProvisionResult[] = [];
  for (;;) {
    const result = await call();
    results.push(result);
    if (!('error' in result) || result.state !== 'Background') return results;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe('cloning a claim', () => {
  it('copies the source in the background, protecting it with the cloning finalizer meanwhile', async () => {
    await using root = await temporaryRoot();
    const { bound, pv, dir } = await boundSource(root.path, 50);
    const fake = api([bound], [pv]);
    const provisioner = nfsProvisioner('nfs-subdir', root.path, { clones: fake.access });
    const options = cloneOptions();

    const results = await untilFinished(() => provisioner.provision(options, context));

    const first = results[0];
    expect(first !== undefined && 'error' in first && first.state).toBe('Background');
    const copy = provisioned(results.at(-1) ?? { error: new Error('none'), state: 'Finished' });
    const copyDir = join(root.path, copy.spec?.nfs?.path.replace('/export/', '') ?? '');
    expect((await readdir(join(copyDir, 'sub'))).sort()).toEqual((await readdir(join(dir, 'sub'))).sort());
    expect(await readFile(join(copyDir, 'sub/f42'), 'utf8')).toBe('42');
    expect(fake.patches).toEqual([
      { name: 'src', patch: { metadata: { finalizers: [finalizerCloningProtection] } } },
      {
        name: 'src',
        patch: { metadata: { '$deleteFromPrimitiveList/finalizers': [finalizerCloningProtection] } },
      },
    ]);
    expect(provisioner.dataSources).toEqual([{ apiGroup: '', kind: 'PersistentVolumeClaim' }]);
  });

  it('retries a failed release of the source, never the finished copy', async () => {
    await using root = await temporaryRoot();
    const { bound, pv } = await boundSource(root.path, 3);
    const fake = api([bound], [pv]);
    let refusals = 1;
    const access: CloneSourceAccess = {
      ...fake.access,
      claims: {
        ...fake.access.claims,
        patch: async (name, patch, type, options) => {
          if (JSON.stringify(patch).includes('deleteFromPrimitiveList') && refusals-- > 0) {
            throw new ApiError(500, 'etcd is busy', { reason: 'InternalError' });
          }
          return fake.access.claims.patch(name, patch, type, options);
        },
      },
    };
    const provisioner = nfsProvisioner('nfs-subdir', root.path, { clones: access });
    const options = cloneOptions();

    const [failure] = (await untilFinished(() => provisioner.provision(options, context))).slice(-1);
    expect(failure !== undefined && 'error' in failure && failure.error.message).toContain('etcd is busy');

    const copy = provisioned(await provisioner.provision(options, context));
    expect(copy.metadata?.name).toBe(options.pvName);
    expect(fake.patches.map((patch) => Object.keys((patch.patch as { metadata: object }).metadata))).toEqual([
      ['finalizers'],
      ['$deleteFromPrimitiveList/finalizers'],
    ]);
  });

  it("leaves another namespace's unrecorded directory as found when a clone is refused it", async () => {
    await using root = await temporaryRoot();
    const { bound, pv } = await boundSource(root.path, 3);
    // Upstream's flat pattern: claim `b-data` of `team-a` renders what claim `data` of `team-a-b` did.
    const victim = join(root.path, 'team-a-b-data');
    await mkdir(victim);
    await writeFile(join(victim, 'precious'), 'team-a-b');
    const provisioner = nfsProvisioner('nfs-subdir', root.path, { clones: api([bound], [pv]).access });
    const pvc = claim({ namespace: 'team-a', name: 'b-data', storage: '1Gi' });
    const options: ProvisionOptions = {
      ...provisionOptions(pvc, storageClass({ pathPattern: '${.PVC.namespace}-${.PVC.name}' })),
      dataSource: { apiGroup: '', kind: 'PersistentVolumeClaim', name: 'src', namespace: 'team-a' },
    };

    const [refused] = (await untilFinished(() => provisioner.provision(options, context))).slice(-1);

    expect(refused !== undefined && 'error' in refused && refused.error.message).toContain(
      'without an ownership record',
    );
    expect(await readdir(victim)).toEqual(['precious']);
    expect(await readFile(join(victim, 'precious'), 'utf8')).toBe('team-a-b');
  });

  it('refuses a source of another namespace, larger than the request, or not Bound', async () => {
    await using root = await temporaryRoot();
    const { bound, pv } = await boundSource(root.path, 1, '2Gi');
    const pending = { ...bound, status: { phase: 'Pending' } };
    const provisioner = (claims: V1PersistentVolumeClaim[]) =>
      nfsProvisioner('nfs-subdir', root.path, {
        clones: api(claims, [{ ...pv, spec: { ...pv.spec, capacity: { storage: '2Gi' } } }]).access,
      });

    const other = failed(await provisioner([bound]).provision(cloneOptions('team-b'), context), true);
    const larger = failed(await provisioner([bound]).provision(cloneOptions('team-a', '1Gi'), context), true);
    const unbound = failed(await provisioner([pending]).provision(cloneOptions(), context), false);

    expect(other.message).toContain('cloning a claim of another namespace is not supported');
    expect(larger.message).toContain('(2Gi) is larger than the request (1Gi)');
    expect(unbound.message).toContain('is not Bound yet');
  });

  it('cancels the copy when its claim is deleted, leaving no volume and releasing the source', async () => {
    await using root = await temporaryRoot();
    const { bound, pv } = await boundSource(root.path, 5);
    const fake = api([bound], [pv]);
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    // The copy stops at its first file until the claim is seen deleted.
    const fs: FsOps = {
      ...nodeFsOps,
      open: async (path, flags, mode) => {
        if (String(path).includes('/sub/f')) await gate;
        return nodeFsOps.open(path, flags, mode);
      },
    };
    const volumes = new VolumeRoot(root.path, { fs });
    const claimsGet = fake.access.claims.get;
    const jobs = new CloneJobs<RelativeVolumePath, Omit<CloneVolumeOptions, keyof CloneCopyOptions>>(
      volumes,
      {
        ...fake.access,
        claims: {
          ...fake.access.claims,
          get: async (name, options) => {
            if (name === 'copy') {
              release();
              throw new ApiError(404, 'not found', { reason: 'NotFound' });
            }
            return claimsGet(name, options);
          },
        },
      },
      provisionerName,
      { checkIntervalMs: 1 },
    );
    const options = cloneOptions();
    const path = parseRelativeVolumePath('team-a-copy');
    const request = {
      pvc: options.pvc,
      pvName: options.pvName,
      path,
      dataSource: options.dataSource ?? { apiGroup: '', kind: '', name: '', namespace: '' },
      volume: {
        owner: {
          claimUid: options.pvc.metadata?.uid ?? '',
          namespace: 'team-a',
          claimName: 'copy',
          pvName: options.pvName,
          provisioner: provisionerName,
        },
        mode: 0o777,
      },
      pathOf: () => parseRelativeVolumePath(pv.spec?.nfs?.path.replace('/export/', '') ?? ''),
    };

    expect(await jobs.step(request, context)).toMatchObject({ ended: false });
    await expect.poll(() => fake.patches.length).toBe(2);

    expect(await readdir(root.path)).not.toContain('team-a-copy');
    expect((await readdir(root.path)).filter((name) => name.includes('copy'))).toEqual([]);
  });
});
