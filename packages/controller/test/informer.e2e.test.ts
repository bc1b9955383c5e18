// The real informer (SharedInformer + Reflector over createKubeApi) keeps an exact mirror of a
// namespace's Leases while a separate client creates, updates and deletes 500 of them, and the
// control plane expires the informer's resourceVersion (etcd compaction + kube-apiserver restart)
// and drops every connection (a second restart) mid-stream.
import { type ControlPlane, stopWaiting, waitFor } from '@kube-provisioner/testenv';
import type { V1Lease } from '@kubernetes/client-node';
import { afterAll, expect, it } from 'vitest';
import { isAlreadyExists, isApiError, isGone, isNotFound } from '../src/client/api-error.ts';
import { type ResourceClient, resources } from '../src/client/resource-client.ts';
import { SharedInformer } from '../src/informer/shared-informer.ts';
import { isDeletedFinalStateUnknown } from '../src/informer/tombstone.ts';
import { useE2eCluster } from './support/e2e-cluster.ts';

const { env, client } = useE2eCluster();

afterAll(async () => {
  // After the restarts, kube-controller-manager and kube-scheduler sometimes take over a minute to
  // notice they watch a new kube-apiserver (namespaces then get no ServiceAccount): restart them,
  // so the files that run next get a working cluster.
  const controlPlane = await env.controlPlane();
  await controlPlane.restartComponent('kube-controller-manager');
  await controlPlane.restartComponent('kube-scheduler');
});

const objectCount = 500;
const writers = 16;
/** Updates per object; every third object is then deleted. */
const updatesPerObject = 2;
const totalWrites = objectCount * (1 + updatesPerObject) + Math.ceil(objectCount / 3);

/** One handler call, reduced to identities: name, uid and resourceVersion. */
type Delivery =
  | { type: 'add'; name: string; uid: string; rv: string }
  | { type: 'update'; name: string; uid: string; rv: string; oldUid: string; oldRv: string }
  | { type: 'delete'; name: string; uid: string; rv: string; tombstone: boolean };

const identity = (lease: V1Lease): { name: string; uid: string; rv: string } => ({
  name: lease.metadata?.name ?? '',
  uid: lease.metadata?.uid ?? '',
  rv: lease.metadata?.resourceVersion ?? '',
});

/** `uid@resourceVersion` by name. */
type Mirror = Map<string, string>;

function mirrorOf(leases: readonly V1Lease[]): Mirror {
  return new Map(
    leases.map((lease) => [identity(lease).name, `${identity(lease).uid}@${identity(lease).rv}`]),
  );
}

/**
 * Replays the handler calls into the state they describe, collecting every call that contradicts
 * the state before it: an add of a present object, an update whose old object is not the last one
 * delivered (a lost or duplicated event) or that goes back in time, a delete of an absent object.
 */
function replay(deliveries: readonly Delivery[]): { mirror: Mirror; violations: string[] } {
  const mirror: Mirror = new Map();
  const violations: string[] = [];
  for (const [index, call] of deliveries.entries()) {
    const current = mirror.get(call.name);
    const at = `#${index} ${call.type} ${call.name}`;
    if (call.type === 'add') {
      if (current !== undefined) violations.push(`${at}: added again without a delete (have ${current})`);
    } else if (call.type === 'update') {
      if (current !== `${call.oldUid}@${call.oldRv}`) {
        violations.push(
          `${at}: old object ${call.oldUid}@${call.oldRv} is not the last delivered ${current}`,
        );
      }
      if (call.uid !== call.oldUid) violations.push(`${at}: uid changed from ${call.oldUid} to ${call.uid}`);
      // resourceVersions are opaque to clients; on a real etcd-backed server they are revisions.
      if (BigInt(call.rv) < BigInt(call.oldRv)) violations.push(`${at}: went back to ${call.rv}`);
    } else if (current === undefined || !current.startsWith(`${call.uid}@`)) {
      violations.push(`${at}: deleted ${call.uid}, but the mirror has ${current}`);
    }
    if (call.type === 'delete') mirror.delete(call.name);
    else mirror.set(call.name, `${call.uid}@${call.rv}`);
  }
  return { mirror, violations };
}

/** Whether a failed write may be retried: the server was unreachable, restarting or overloaded. */
function isTransient(err: unknown): boolean {
  if (!isApiError(err)) return true;
  // 401/403 are answered briefly while a restarted apiserver loads its authn/authz state.
  return err.statusCode >= 500 || err.statusCode === 429 || err.statusCode === 401 || err.statusCode === 403;
}

/**
 * Runs a write until it succeeds, retrying transient failures for up to 90 s. `write` learns whether
 * this is a retry, because an earlier attempt whose answer was lost may have been applied.
 */
async function persist(write: (isRetry: boolean) => Promise<unknown>): Promise<void> {
  let attempts = 0;
  await waitFor(
    async () => {
      try {
        await write(attempts++ > 0);
        return true;
      } catch (err) {
        throw isApiError(err) && !isTransient(err) ? stopWaiting(err) : err;
      }
    },
    { timeoutMs: 90_000, intervalMs: 250, description: 'a write to go through' },
  );
}

/** Lets the test hold the writers between two writes, to place a fault exactly. */
class WriteGate {
  /** Writes completed. */
  writes = 0;
  /** Writes started and not completed. */
  inFlight = 0;
  #closed: PromiseWithResolvers<void> | undefined;

  /** Waits while the gate is closed, then runs `write` to completion with {@link persist}. */
  async write(write: (isRetry: boolean) => Promise<unknown>): Promise<void> {
    while (this.#closed !== undefined) await this.#closed.promise;
    this.inFlight += 1;
    try {
      await persist(write);
      this.writes += 1;
    } finally {
      this.inFlight -= 1;
    }
  }

  close(): void {
    this.#closed ??= Promise.withResolvers();
  }

  open(): void {
    this.#closed?.resolve();
    this.#closed = undefined;
  }
}

/** The writes of one object, in order: create, absolute (so idempotent) updates, maybe delete. */
async function churn(
  leases: ResourceClient<V1Lease>,
  namespace: string,
  index: number,
  gate: WriteGate,
): Promise<void> {
  const name = `lease-${String(index).padStart(3, '0')}`;
  await gate.write(async (isRetry) => {
    try {
      await leases.create({ metadata: { name, namespace }, spec: { holderIdentity: 'v0' } });
    } catch (err) {
      if (!(isRetry && isAlreadyExists(err))) throw err;
    }
  });
  for (let version = 1; version <= updatesPerObject; version++) {
    await gate.write(() =>
      leases.patch(name, { spec: { holderIdentity: `v${version}` } }, 'merge', { namespace }),
    );
  }
  if (index % 3 === 0) {
    await gate.write(async (isRetry) => {
      try {
        await leases.delete(name, { namespace });
      } catch (err) {
        if (!(isRetry && isNotFound(err))) throw err;
      }
    });
  }
}

/**
 * Leaves the informer's resourceVersion below etcd's compacted revision, so its next watch gets
 * 410 Gone: with the writers held, a write the informer does not watch (another namespace) moves
 * the revision on, then etcd is compacted past it. Repeated if a bookmark moved the informer too.
 */
async function expireInformerVersion(
  controlPlane: ControlPlane,
  gate: WriteGate,
  informerVersion: () => string,
): Promise<void> {
  gate.close();
  await waitFor(() => gate.inFlight === 0, { timeoutMs: 30_000, description: 'writes in flight' });
  const namespace = await env.namespace('bystander');
  const bystanders = client().resource(resources.leases);
  for (let attempt = 0; ; attempt++) {
    const written = await bystanders.create({ metadata: { name: `bystander-${attempt}`, namespace } });
    await controlPlane.compactEtcd();
    if (BigInt(informerVersion()) < BigInt(written.metadata?.resourceVersion ?? '')) return;
  }
}

it('mirrors 500 concurrently changing objects exactly across a 410 Gone relist and apiserver restarts', async () => {
  const controlPlane = await env.controlPlane();
  const namespace = await env.namespace('informer');

  const watchErrors: unknown[] = [];
  const informer = new SharedInformer(client().resource(resources.leases), {
    namespace,
    onWatchError: (err) => watchErrors.push(err),
  });
  const deliveries: Delivery[] = [];
  let initialAdds = 0;
  informer.addEventHandler({
    onAdd: (obj, isInInitialList) => {
      if (isInInitialList) initialAdds += 1;
      deliveries.push({ type: 'add', ...identity(obj) });
    },
    onUpdate: (oldObj, newObj) => {
      const old = identity(oldObj);
      deliveries.push({ type: 'update', ...identity(newObj), oldUid: old.uid, oldRv: old.rv });
    },
    onDelete: (obj) => {
      const tombstone = isDeletedFinalStateUnknown(obj);
      deliveries.push({ type: 'delete', ...identity(tombstone ? obj.obj : obj), tombstone });
    },
  });
  const stop = new AbortController();
  const running = informer.run(stop.signal);

  try {
    await waitFor(informer.hasSynced, { timeoutMs: 30_000, description: 'the informer to sync' });

    // Throttled, so the faults land while plenty of writes are still to come.
    const leases = client({ rateLimit: { qps: 100, burst: 20 } }).resource(resources.leases);
    const gate = new WriteGate();
    let next = 0;
    const writing = Promise.all(
      Array.from({ length: writers }, async () => {
        while (next < objectCount) await churn(leases, namespace, next++, gate);
      }),
    );
    const writesAfterRestarts: number[] = [];
    const faults = (async () => {
      const writes = (share: number) =>
        waitFor(() => gate.writes >= totalWrites * share, { timeoutMs: 90_000, description: 'writes' });
      await writes(1 / 4);
      await expireInformerVersion(controlPlane, gate, () => informer.lastSyncResourceVersion);
      await controlPlane.stopComponent('kube-apiserver');
      // The writers retry against the stopped server while it starts again.
      gate.open();
      await controlPlane.startComponent('kube-apiserver');
      writesAfterRestarts.push(gate.writes);
      await writes(1 / 2);
      // Writers running: every connection drops mid-stream.
      await controlPlane.restartComponent('kube-apiserver');
      writesAfterRestarts.push(gate.writes);
    })();
    await Promise.all([writing, faults]);
    expect(gate.writes).toBe(totalWrites);
    // Writing went on after each restart, so the informer had changes to follow across both.
    expect(writesAfterRestarts.every((count) => count < totalWrites)).toBe(true);

    const server = await leases.list({ namespace });
    const expected = mirrorOf(server.items);
    expect(expected.size).toBe(objectCount - Math.ceil(objectCount / 3));
    expect(new Set(server.items.map((lease) => lease.spec?.holderIdentity))).toEqual(
      new Set([`v${updatesPerObject}`]),
    );

    // On a timeout the assertions below show the difference.
    await waitFor(
      () =>
        sameMirror(mirrorOf(informer.store.list()), expected) &&
        sameMirror(replay(deliveries).mirror, expected),
      { timeoutMs: 60_000, description: 'the cache and the handler to reach the server state' },
    ).catch(() => {});
    expect(mirrorOf(informer.store.list())).toEqual(expected);
    const { mirror, violations } = replay(deliveries);
    expect(mirror).toEqual(expected);
    expect(violations).toEqual([]);
    expect(initialAdds).toBe(0);
    // The 410 path ran: the watch's resourceVersion expired and the reflector relisted.
    expect(watchErrors.some(isGone)).toBe(true);
    expect(informer.stats.lists).toBeGreaterThanOrEqual(2);
  } finally {
    stop.abort();
    await running;
  }
}, 240_000);

function sameMirror(actual: Mirror, expected: Mirror): boolean {
  if (actual.size !== expected.size) return false;
  for (const [name, state] of expected) if (actual.get(name) !== state) return false;
  return true;
}
