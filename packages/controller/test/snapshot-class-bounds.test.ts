/**
 * A source claim's class bounds its snapshots (`snapshotsPerClaim`, `snapshotRetention`): the
 * leader's sweep deletes the expired snapshot objects (their data then goes by the usual deletion
 * path), never one not ready or one a restore copies from, only this provisioner's snapshots of that
 * very claim, and nothing once its term has lapsed.
 */
import type { V1PersistentVolume, V1PersistentVolumeClaim, V1StorageClass } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { resources } from '../src/client/resource-client.ts';
import { finalizerCloningProtection } from '../src/clone/clone-source.ts';
import { LeadershipLapsedError } from '../src/leader-election/lease-fence.ts';
import {
  annSnapshotProvisioner,
  annSnapshotSourceClaimUid,
  type DirectorySnapshot,
  directorySnapshots,
  parseSnapshotBounds,
  reasonSnapshotExpired,
  type SnapshotStorage,
  SnapshotTaker,
  snapshotFinalizer,
  snapshotMetricNames,
} from '../src/snapshot/index.ts';
import { FakeKubeApi } from '../src/testing/fake-api.ts';
import { operationContext } from '../src/testing/provision-fixtures.ts';
import { statusError } from '../src/testing/status-error.ts';
import { eventually } from '../src/testing/wait.ts';

const provisionerName = 'example.com/dirs';
const now = Date.parse('2026-11-29T12:00:00Z');
const hour = 3_600_000;

const storage: SnapshotStorage<string> = {
  volumes: {
    cloneVolume: async () => ({ entries: 1, bytes: 5, skipped: 0 }),
    createVolume: async () => undefined,
    removeCloneLeftover: async () => undefined,
    deleteVolume: async () => undefined,
    releaseVolume: async () => undefined,
  },
  sourcePathOf: (pv) => `volume-of-${pv.metadata?.name}`,
  snapshotPathOf: async (namespace, uid) => `snap/${namespace}/${uid}`,
};

function claim(namespace: string, name: string, uid: string, volumeName: string): V1PersistentVolumeClaim {
  return {
    metadata: { name, namespace, uid },
    spec: { volumeName },
    status: { phase: 'Bound' },
  };
}

function volume(name: string, storageClassName: string): V1PersistentVolume {
  return {
    metadata: { name, annotations: { 'pv.kubernetes.io/provisioned-by': provisionerName } },
    spec: { capacity: { storage: '1Gi' }, storageClassName },
  };
}

interface SnapshotFixture {
  readonly namespace?: string;
  readonly claimName?: string;
  readonly claimUid?: string;
  readonly provisioner?: string;
  readonly ageHours?: number;
  readonly ready?: boolean;
  readonly restoring?: boolean;
}

/** A snapshot this provisioner took (unless told otherwise) of team-a/src, `ageHours` ago. */
function snapshot(name: string, fixture: SnapshotFixture = {}): DirectorySnapshot {
  const { namespace = 'team-a', claimName = 'src', claimUid = 'src-uid', ageHours = 1 } = fixture;
  const ready = fixture.ready ?? true;
  return {
    metadata: {
      name,
      namespace,
      uid: `${namespace}-${name}`,
      annotations: {
        [annSnapshotProvisioner]: fixture.provisioner ?? provisionerName,
        [annSnapshotSourceClaimUid]: claimUid,
      },
      finalizers: [snapshotFinalizer, ...(fixture.restoring ? [finalizerCloningProtection] : [])],
    },
    spec: { source: { persistentVolumeClaimName: claimName } },
    status: ready
      ? { readyToUse: true, creationTime: new Date(now - ageHours * hour).toISOString() }
      : { readyToUse: false },
  };
}

/** A cluster with claim team-a/src of class `bounded` whose parameters are `parameters`. */
function cluster(parameters: Record<string, string>, ...snapshots: DirectorySnapshot[]) {
  return clusterSweptEvery({ nowMs: now }, parameters, ...snapshots);
}

/** {@link cluster} at `clock.nowMs` (changed by the test), its taker sweeping every `sweepIntervalMs` once started. */
function clusterSweptEvery(
  clock: { nowMs: number; readonly sweepIntervalMs?: number },
  parameters: Record<string, string>,
  ...snapshots: DirectorySnapshot[]
) {
  const api = new FakeKubeApi();
  api.seed(resources.persistentVolumeClaims, claim('team-a', 'src', 'src-uid', 'pv-src'));
  api.seed(resources.persistentVolumes, volume('pv-src', 'bounded'));
  const storageClass: V1StorageClass = {
    metadata: { name: 'bounded' },
    provisioner: provisionerName,
    parameters,
  };
  api.seed(resources.storageClasses, storageClass);
  api.seed(directorySnapshots, ...snapshots);
  const events: string[] = [];
  const registry = new Registry();
  const taker = new SnapshotTaker({
    snapshots: api.resource(directorySnapshots),
    claims: api.resource(resources.persistentVolumeClaims),
    volumes: api.resource(resources.persistentVolumes),
    classes: api.resource(resources.storageClasses),
    events: {
      event: (object, type, reason, message) =>
        events.push(`${object.metadata?.namespace}/${object.metadata?.name} ${type} ${reason}: ${message}`),
    },
    registry,
    storage,
    provisionerName,
    now: () => clock.nowMs,
    sweepIntervalMs: clock.sweepIntervalMs,
  });
  /** Names of the snapshots whose objects were deleted (marked, their finalizer holding them). */
  const deleted = (): string[] =>
    api
      .objects(directorySnapshots)
      .filter((s) => s.metadata?.deletionTimestamp !== undefined)
      .map((s) => `${s.metadata?.namespace}/${s.metadata?.name}`);
  return { api, taker, events, registry, deleted };
}

describe('snapshot class bounds', () => {
  it('keeps the newest snapshotsPerClaim snapshots of a claim and deletes the older ones', async () => {
    const { taker, events, registry, deleted } = cluster(
      { snapshotsPerClaim: '2' },
      snapshot('oldest', { ageHours: 30 }),
      snapshot('middle', { ageHours: 20 }),
      snapshot('newest', { ageHours: 10 }),
    );

    await taker.sweep(operationContext());

    expect(deleted()).toEqual(['team-a/oldest']);
    expect(events).toEqual([
      `team-a/oldest Normal ${reasonSnapshotExpired}: deleted: claim team-a/src keeps its newest 2 snapshots (snapshotsPerClaim of StorageClass bounded)`,
    ]);
    const metric = await registry.getSingleMetric(snapshotMetricNames.expired)?.get();
    expect(metric?.values).toEqual([{ labels: { bound: 'snapshotsPerClaim' }, value: 1 }]);
  });

  it('deletes the snapshots older than snapshotRetention', async () => {
    const { taker, events, deleted } = cluster(
      { snapshotRetention: '24h' },
      snapshot('two-days', { ageHours: 48 }),
      snapshot('an-hour', { ageHours: 1 }),
    );

    await taker.sweep(operationContext());

    expect(deleted()).toEqual(['team-a/two-days']);
    expect(events).toEqual([
      `team-a/two-days Normal ${reasonSnapshotExpired}: deleted: older than 24h (snapshotRetention of StorageClass bounded)`,
    ]);
  });

  it('sweeps every claim when its term starts and on its interval, with no snapshot becoming ready', async () => {
    const clock = { nowMs: now, sweepIntervalMs: 20 };
    const { api, taker } = clusterSweptEvery(
      clock,
      { snapshotRetention: '24h' },
      snapshot('two-days', { ageHours: 48 }),
      snapshot('almost-a-day', { ageHours: 23 }),
    );
    const term = new AbortController();
    taker.start({ ...operationContext(), signal: term.signal });
    const names = () => api.objects(directorySnapshots).map((s) => s.metadata?.name);

    // Deleted, then its data and finalizer removed by the watch: the object is gone.
    await eventually(() => expect(names()).toEqual(['almost-a-day']));
    clock.nowMs = now + 2 * hour;
    await eventually(() => expect(names()).toEqual([]));
    term.abort();
  });

  it('never deletes a snapshot not ready yet or one a restore still copies from', async () => {
    const { taker, events, deleted } = cluster(
      { snapshotsPerClaim: '1', snapshotRetention: '1h' },
      snapshot('newest', { ageHours: 0 }),
      snapshot('restoring', { ageHours: 50, restoring: true }),
      snapshot('copying', { ready: false }),
    );

    await taker.sweep(operationContext());

    expect(deleted()).toEqual([]);
    expect(events).toEqual([]);
  });

  it('when a snapshot becomes ready, deletes the claim’s oldest beyond the bound and nothing of other claims, namespaces or provisioners', async () => {
    const { api, taker, deleted } = cluster(
      { snapshotsPerClaim: '1' },
      snapshot('old', { ageHours: 5 }),
      // Another claim of the same class, swept only when one of its own becomes ready.
      snapshot('other-claim-1', { claimName: 'other', claimUid: 'other-uid', ageHours: 5 }),
      snapshot('other-claim-2', { claimName: 'other', claimUid: 'other-uid', ageHours: 4 }),
      // The same claim name in another namespace, and another provisioner's snapshot of this claim.
      snapshot('elsewhere', { namespace: 'team-b', claimUid: 'team-b-src-uid', ageHours: 5 }),
      snapshot('not-ours', { provisioner: 'example.com/other', ageHours: 6 }),
      // A predecessor claim of the same name (deleted, made again): not the same claim.
      snapshot('predecessor', { claimUid: 'deleted-src-uid', ageHours: 7 }),
    );
    api.seed(resources.persistentVolumeClaims, claim('team-a', 'other', 'other-uid', 'pv-src'));
    api.seed(resources.persistentVolumeClaims, claim('team-b', 'src', 'team-b-src-uid', 'pv-src'));
    const snapshots = api.resource(directorySnapshots);
    const created = await snapshots.create(
      {
        metadata: { name: 'new', namespace: 'team-a' },
        spec: { source: { persistentVolumeClaimName: 'src' } },
      },
      { namespace: 'team-a' },
    );

    await expect(taker.reconcile(created, operationContext())).resolves.toBe('settled');

    const taken = await snapshots.get('new', { namespace: 'team-a' });
    expect(taken.status?.readyToUse).toBe(true);
    expect(taken.metadata?.annotations?.[annSnapshotSourceClaimUid]).toBe('src-uid');
    expect(deleted()).toEqual(['team-a/old']);
  });

  it('deletes the other expired snapshots when one delete fails, leaving that one to the next sweep', async () => {
    const { api, taker, deleted } = cluster(
      { snapshotRetention: '24h' },
      snapshot('fails', { ageHours: 50 }),
      snapshot('goes', { ageHours: 49 }),
    );
    api.failNext({
      verb: 'delete',
      resource: directorySnapshots.plural,
      name: 'fails',
      error: statusError('InternalError', 'etcd hiccup'),
    });

    await taker.sweep(operationContext());
    expect(deleted()).toEqual(['team-a/goes']);

    await taker.sweep(operationContext());
    expect(deleted()).toEqual(['team-a/fails', 'team-a/goes']);
  });

  it('keeps the snapshots of a claim that is gone: no class bounds them any more', async () => {
    const { api, taker, deleted } = cluster(
      { snapshotsPerClaim: '1', snapshotRetention: '1h' },
      snapshot('older', { ageHours: 5 }),
      snapshot('newer', { ageHours: 2 }),
    );
    await api.resource(resources.persistentVolumeClaims).delete('src', { namespace: 'team-a' });

    await taker.sweep(operationContext());

    expect(deleted()).toEqual([]);
  });

  it('deletes nothing under a malformed bound', async () => {
    const { taker, deleted } = cluster(
      { snapshotsPerClaim: '0' },
      snapshot('older', { ageHours: 5 }),
      snapshot('newer', { ageHours: 2 }),
    );

    await taker.sweep(operationContext());

    expect(deleted()).toEqual([]);
  });

  it('writes nothing once its term has lapsed', async () => {
    const { api, taker, events, deleted } = cluster(
      { snapshotsPerClaim: '1' },
      snapshot('older', { ageHours: 5 }),
      snapshot('newer', { ageHours: 2 }),
    );
    api.clearActions();
    const lapsed = {
      ...operationContext(),
      assertLeader: () => {
        throw new LeadershipLapsedError('leadership lapsed');
      },
    };

    await expect(taker.sweep(lapsed)).rejects.toBeInstanceOf(LeadershipLapsedError);

    expect(deleted()).toEqual([]);
    expect(events).toEqual([]);
    expect(api.actions().filter((action) => action.verb !== 'get' && action.verb !== 'list')).toEqual([]);
  });
});

describe('parseSnapshotBounds', () => {
  it('reads a positive count and a positive Go duration, other keys ignored', () => {
    expect(
      parseSnapshotBounds({ snapshotsPerClaim: '3', snapshotRetention: '1h30m', onDelete: 'x' }),
    ).toEqual({
      bounds: { perClaim: 3, retentionMs: 1.5 * hour },
      problems: [],
    });
    expect(parseSnapshotBounds(undefined)).toEqual({ bounds: {}, problems: [] });
  });

  it('names each malformed value with what is accepted', () => {
    const { problems } = parseSnapshotBounds({ snapshotsPerClaim: '-1', snapshotRetention: '0s' });
    expect(problems).toEqual([
      'invalid value "-1" for parameter "snapshotsPerClaim": accepted values: a whole number of snapshots from 1, such as 5',
      'invalid value "0s" for parameter "snapshotRetention": accepted values: a positive Go duration such as 720h',
    ]);
    expect(parseSnapshotBounds({ snapshotsPerClaim: '2.5' }).problems).toHaveLength(1);
    expect(parseSnapshotBounds({ snapshotRetention: '30d' }).problems).toHaveLength(1);
  });
});
