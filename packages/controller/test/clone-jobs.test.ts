/**
 * Background clones over any provisioner's volumes: copies are capped, a failed copy leaves no
 * volume and frees its source, a deleted claim cancels its copy, and the source is checked before
 * anything is written.
 */
import type { V1PersistentVolume, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../src/client/api-error.ts';
import {
  CloneJobs,
  type CloneRequest,
  type CloneSourceAccess,
  cloneMetricNames,
  finalizerCloningProtection,
  maxRunningClones,
} from '../src/clone/index.ts';
import { isInfeasibleError } from '../src/errors.ts';
import { metricValue } from '../src/testing/metric-samples.ts';
import { claimFixture, operationContext } from '../src/testing/provision-fixtures.ts';
import { ManualVolumes } from './support/manual-clone-volumes.ts';

const provisioner = 'example.com/copier';
const context = operationContext();
const notFound = () => new ApiError(404, 'not found', { reason: 'NotFound' });

function sourcePv(capacity = '1Gi', provisionedBy = provisioner): V1PersistentVolume {
  return {
    metadata: { name: 'pv-src', annotations: { 'pv.kubernetes.io/provisioned-by': provisionedBy } },
    spec: { capacity: { storage: capacity } },
  };
}

const source: V1PersistentVolumeClaim = {
  metadata: { namespace: 'team-a', name: 'src', uid: 'src-uid' },
  spec: { volumeName: 'pv-src' },
  status: { phase: 'Bound' },
};

/** A fake API with the source claim and its PV; `deleted` claims answer NotFound. */
function api(pv = sourcePv(), claims: V1PersistentVolumeClaim[] = [source]) {
  const patches: { name: string; patch: unknown }[] = [];
  const deleted = new Set<string>();
  const access: CloneSourceAccess = {
    claims: {
      async get(name, options) {
        const found = claims.find(
          (c) => c.metadata?.name === name && c.metadata.namespace === options?.namespace,
        );
        if (found === undefined || deleted.has(name)) throw notFound();
        return found;
      },
      async patch(name, patch) {
        patches.push({ name, patch });
        return source;
      },
    },
    volumes: { get: async (name) => (name === pv.metadata?.name ? pv : Promise.reject(notFound())) },
  };
  return { access, patches, deleted };
}

const claims = new Map<string, V1PersistentVolumeClaim>();

/** The clone of `src` into claim `name`: the same claim (and UID) on every call. */
function request(name: string): CloneRequest<string, { readonly label: string }> {
  const pvc = claims.get(name) ?? claimFixture({ namespace: 'team-a', name });
  claims.set(name, pvc);
  return {
    pvc,
    pvName: `pv-${name}`,
    path: name,
    dataSource: { apiGroup: '', kind: 'PersistentVolumeClaim', namespace: 'team-a', name: 'src' },
    volume: { label: name },
    pathOf: (pv) => `dir-of-${pv.metadata?.name}`,
  };
}

const protect = { metadata: { finalizers: [finalizerCloningProtection] } };
const release = { metadata: { '$deleteFromPrimitiveList/finalizers': [finalizerCloningProtection] } };

describe('CloneJobs', () => {
  it('copies the source volume with the request options, reports progress, then releases the source', async () => {
    const fake = api();
    const volumes = new ManualVolumes();
    const jobs = new CloneJobs(volumes, fake.access, provisioner);

    expect(await jobs.step(request('copy'), context)).toEqual({
      ended: false,
      message: 'cloning team-a/src into copy: started',
    });
    const copy = volumes.copies.get('copy');
    expect(copy?.source).toBe('dir-of-pv-src');
    expect(copy?.options).toMatchObject({ label: 'copy', sourcePvName: 'pv-src' });
    copy?.options.onProgress({ entries: 3, bytes: 10, skipped: 1 });
    expect(await jobs.step(request('copy'), context)).toMatchObject({
      message: 'cloning team-a/src into copy: 3 entries, 10 bytes copied, 1 special files skipped so far',
    });
    copy?.finish({ entries: 4, bytes: 12, skipped: 1 });
    await expect.poll(() => jobs.step(request('copy'), context)).toEqual({ ended: true });
    expect(fake.patches).toEqual([
      { name: 'src', patch: protect },
      { name: 'src', patch: release },
    ]);
  });

  it('counts the copies running, the bytes they copy as they go, and how each ended', async () => {
    const registry = new Registry();
    const target = request('cancelled');
    const fake = api(sourcePv(), [source, target.pvc]);
    const volumes = new ManualVolumes();
    const jobs = new CloneJobs(volumes, fake.access, provisioner, { registry, checkIntervalMs: 1 });
    const value = (name: string, labels: Record<string, string> = {}) => metricValue(registry, name, labels);

    await jobs.step(request('copy'), context);
    await jobs.step(target, context);
    expect(await value(cloneMetricNames.running)).toBe(2);
    volumes.copies.get('copy')?.options.onProgress({ entries: 3, bytes: 10, skipped: 0 });
    expect(await value(cloneMetricNames.bytes)).toBe(10);
    volumes.copies.get('copy')?.finish({ entries: 4, bytes: 25, skipped: 0 });
    await expect.poll(() => value(cloneMetricNames.ended, { result: 'succeeded' })).toBe(1);
    expect(await value(cloneMetricNames.bytes)).toBe(25);

    fake.deleted.add('cancelled');

    await expect.poll(() => value(cloneMetricNames.ended, { result: 'cancelled' })).toBe(1);
    expect(await value(cloneMetricNames.ended, { result: 'failed' })).toBe(0);
    expect(await value(cloneMetricNames.running)).toBe(0);
  });

  it(`runs at most ${maxRunningClones} copies at once; another claim waits for its next call`, async () => {
    const volumes = new ManualVolumes();
    const jobs = new CloneJobs(volumes, api().access, provisioner);

    for (let index = 0; index < maxRunningClones; index++) await jobs.step(request(`copy-${index}`), context);
    const waiting = await jobs.step(request('late'), context);

    expect(waiting).toEqual({
      ended: false,
      message: `cloning team-a/src into late: waiting, 2 clones are running`,
    });
    expect([...volumes.copies.keys()]).toEqual(['copy-0', 'copy-1']);
    volumes.copies.get('copy-0')?.finish({ entries: 1, bytes: 0, skipped: 0 });
    await expect.poll(() => jobs.step(request('late'), context)).toMatchObject({ message: /late: started/u });
  });

  it('requeues the claim as soon as its copy ends, succeeded or failed, and the oldest waiting claim as a slot frees', async () => {
    const volumes = new ManualVolumes();
    const jobs = new CloneJobs(volumes, api().access, provisioner);
    const requeued: string[] = [];
    for (const name of ['copy-0', 'copy-1', 'late-0', 'late-1']) {
      await jobs.step(request(name), { ...context, requeue: () => requeued.push(name) });
    }
    expect(requeued).toEqual([]);

    volumes.copies.get('copy-0')?.finish({ entries: 1, bytes: 0, skipped: 0 });
    await expect.poll(() => requeued).toEqual(['copy-0', 'late-0']);
    volumes.copies.get('copy-1')?.finish(new Error('disk full'));
    await expect.poll(() => requeued).toEqual(['copy-0', 'late-0', 'copy-1', 'late-1']);
  });

  it('removes the new volume and frees the source after a failed copy, and throws its error once', async () => {
    const fake = api();
    const volumes = new ManualVolumes();
    const jobs = new CloneJobs(volumes, fake.access, provisioner);
    await jobs.step(request('copy'), context);

    volumes.copies.get('copy')?.finish(new Error('disk full'));

    await expect
      .poll(() => jobs.step(request('copy'), context).catch((err: Error) => err.message))
      .toBe('disk full');
    expect(volumes.deleted).toEqual(['copy']);
    expect(fake.patches).toEqual([
      { name: 'src', patch: protect },
      { name: 'src', patch: release },
    ]);
    volumes.copies.clear();
    expect(await jobs.step(request('copy'), context)).toMatchObject({ message: /started/u });
  });

  it('frees the source after a failed copy even when its volume cannot be removed', async () => {
    const fake = api();
    const volumes = new ManualVolumes();
    volumes.deleteVolume = () => Promise.reject(new Error('is recorded for another PV'));
    const jobs = new CloneJobs(volumes, fake.access, provisioner);
    await jobs.step(request('copy'), context);

    volumes.copies.get('copy')?.finish(new Error('disk full'));

    await expect
      .poll(() => fake.patches)
      .toEqual([
        { name: 'src', patch: protect },
        { name: 'src', patch: release },
      ]);
  });

  it('cancels the copy of a deleted claim, leaving no volume and a free source', async () => {
    const target = request('copy');
    const fake = api(sourcePv(), [source, target.pvc]);
    const volumes = new ManualVolumes();
    const jobs = new CloneJobs(volumes, fake.access, provisioner, { checkIntervalMs: 1 });
    await jobs.step(target, context);

    fake.deleted.add('copy');

    await expect.poll(() => volumes.deleted).toEqual(['copy']);
    await expect.poll(() => fake.patches.length).toBe(2);
    expect(volumes.copies.get('copy')?.options.signal.aborted).toBe(true);
  });

  it('checks its own claim through targetClaims, not the source access (a snapshot adapter answers with snapshots)', async () => {
    const target = request('restore');
    // As a snapshot adapter: its claims are sources only, so the restoring claim is not among them.
    const fake = api(sourcePv(), [source]);
    let checks = 0;
    const live = {
      get: async () => {
        checks += 1;
        return target.pvc;
      },
    };
    const volumes = new ManualVolumes();
    const jobs = new CloneJobs(volumes, fake.access, provisioner, { checkIntervalMs: 1, targetClaims: live });
    await jobs.step(target, context);
    const copy = volumes.copies.get('restore');
    // Several checks pass while the copy runs; none may cancel it.
    await expect.poll(() => checks).toBeGreaterThanOrEqual(3);
    expect(copy?.options.signal.aborted).toBe(false);
    copy?.finish({ entries: 1, bytes: 1, skipped: 0 });
    await expect.poll(() => jobs.step(target, context)).toEqual({ ended: true });
    expect(volumes.deleted).toEqual([]);
  });

  it('refuses, before writing anything, a source of another namespace, provisioner or larger size', async () => {
    const refusal = async (
      pv: V1PersistentVolume,
      target: CloneRequest<string, { readonly label: string }>,
    ) => {
      const fake = api(pv);
      const error = await new CloneJobs(new ManualVolumes(), fake.access, provisioner)
        .step(target, context)
        .catch((err: unknown) => err as Error);
      expect(fake.patches).toEqual([]);
      expect(isInfeasibleError(error)).toBe(true);
      return (error as Error).message;
    };
    const otherNamespace = {
      ...request('copy'),
      dataSource: { ...request('copy').dataSource, namespace: 'team-b' },
    };

    expect(await refusal(sourcePv(), otherNamespace)).toContain('cloning a claim of another namespace');
    expect(await refusal(sourcePv('1Gi', 'example.com/other'), request('copy'))).toContain(
      'which example.com/copier did not provision',
    );
    expect(await refusal(sourcePv('2Gi'), request('copy'))).toContain(
      '(2Gi) is larger than the request (1Gi)',
    );
  });

  it('retries, without refusing, a source that is not Bound yet', async () => {
    const pending = { ...source, status: { phase: 'Pending' } };
    const jobs = new CloneJobs(new ManualVolumes(), api(sourcePv(), [pending]).access, provisioner);

    const error = await jobs.step(request('copy'), context).catch((err: unknown) => err as Error);

    expect(error).toBeInstanceOf(Error);
    expect(isInfeasibleError(error)).toBe(false);
    expect((error as Error).message).toBe('source claim team-a/src is not Bound yet');
  });
});
