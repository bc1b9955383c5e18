// Volume expansion on the real control plane: kube-apiserver (which only lets a claim grow when its
// class allows expansion, and lets it shrink back only above its status capacity), the PV binder and
// kube-controller-manager's expander, which sees a volume no in-tree plugin can grow and leaves it to
// an external controller with one `ExternalExpanding` event. The controller runs under a
// ServiceAccount bound to exactly the rules it documents: the controller's and `volumeExpansionRules`.
import { waitFor } from '@kube-provisioner/testenv';
import { uniqueName } from '@kube-provisioner/testenv/testing';
import {
  type CoreV1Event,
  RbacAuthorizationV1Api,
  type V1PersistentVolume,
  type V1PersistentVolumeClaim,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { controllerClusterRules, leaderElectionRules, volumeExpansionRules } from '../src/cli/rbac.ts';
import { createKubeApi, type KubeApiClient } from '../src/client/kube-api.ts';
import { resources } from '../src/client/resource-client.ts';
import { InfeasibleError } from '../src/errors.ts';
import { ProvisionController } from '../src/provision-controller.ts';
import type {
  ExpandOptions,
  ExpandResult,
  OperationContext,
  Provisioner,
  ProvisionOptions,
  ProvisionResult,
} from '../src/provisioner.ts';
import { silentLogger } from '../src/util/logger.ts';
import { ItemExponentialFailureRateLimiter } from '../src/workqueue/rate-limiters.ts';
import { useE2eCluster } from './support/e2e-cluster.ts';

const { env, client } = useE2eCluster();
const admin = client();
const account = { namespace: 'kube-system', name: uniqueName('expander') };
const cleanups: (() => Promise<unknown>)[] = [];
let serviceAccountApi: KubeApiClient | undefined;

/** How the test backend answers one `expand` call. */
type ExpandScript = (options: ExpandOptions, context: OperationContext) => Promise<ExpandResult>;

/** A backend of sized assets: provisions at the requested size, expands as the current script says. */
class SizedBackend implements Provisioner {
  /** Asset sizes by PV name: what the backend holds. */
  readonly sizes = new Map<string, string>();
  /** Every `expand` call: the size asked for and when, by the identity of the caller. */
  readonly expandCalls: { capacity: string; atMs: number; by: string }[] = [];
  script: ExpandScript = async (options) => ({ capacity: options.capacity });
  readonly #identity: () => string;

  constructor(identity: () => string = () => '') {
    this.#identity = identity;
  }

  async provision(options: ProvisionOptions): Promise<ProvisionResult> {
    const storage = options.pvc.spec?.resources?.requests?.storage ?? '0';
    this.sizes.set(options.pvName, storage);
    return {
      pv: {
        metadata: { name: options.pvName },
        spec: {
          capacity: { storage },
          accessModes: ['ReadWriteOnce'],
          persistentVolumeReclaimPolicy: 'Delete',
          hostPath: { path: `/srv/expansion/${options.pvName}` },
        },
      },
    };
  }

  async delete(pv: Readonly<V1PersistentVolume>): Promise<void> {
    this.sizes.delete(pv.metadata?.name ?? '');
  }

  async expand(options: ExpandOptions, context: OperationContext): Promise<ExpandResult> {
    this.expandCalls.push({ capacity: options.capacity, atMs: Date.now(), by: this.#identity() });
    const result = await this.script(options, context);
    if (!('error' in result)) {
      context.assertLeader();
      this.sizes.set(options.pv.metadata?.name ?? '', options.capacity);
    }
    return result;
  }
}

/** Retries after 200 ms, 400 ms, 800 ms…: the Go default starts at 15 s. */
const fastRetries = () => new ItemExponentialFailureRateLimiter(200, 5_000);

beforeAll(async () => {
  const rbac = env.kubeConfig.makeApiClient(RbacAuthorizationV1Api);
  const name = account.name;
  const subjects = [{ kind: 'ServiceAccount', ...account }];
  const roleRef = { apiGroup: 'rbac.authorization.k8s.io', name };
  const toRules = (rules: typeof controllerClusterRules) =>
    rules.map((rule) => ({
      apiGroups: [...rule.apiGroups],
      resources: [...rule.resources],
      verbs: [...rule.verbs],
    }));
  await rbac.createClusterRole({
    body: { metadata: { name }, rules: toRules([...controllerClusterRules, ...volumeExpansionRules]) },
  });
  await rbac.createClusterRoleBinding({
    body: { metadata: { name }, subjects, roleRef: { ...roleRef, kind: 'ClusterRole' } },
  });
  await rbac.createNamespacedRole({
    namespace: account.namespace,
    body: { metadata: { name }, rules: toRules(leaderElectionRules) },
  });
  await rbac.createNamespacedRoleBinding({
    namespace: account.namespace,
    body: { metadata: { name }, subjects, roleRef: { ...roleRef, kind: 'Role' } },
  });
  const { kubeConfig } = await env.serviceAccountKubeconfig(account);
  serviceAccountApi = createKubeApi(kubeConfig);
});

afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await serviceAccountApi?.close();
});

/** Starts a controller for `backend` under the ServiceAccount; stopped after the file unless stopped before. */
function startController(
  backend: Provisioner,
  provisionerName: string,
  options: { leaderElection?: boolean; shutdownTimeoutMs?: number } = {},
): { controller: ProvisionController; stop: () => Promise<void> } {
  if (serviceAccountApi === undefined) throw new Error('no ServiceAccount client');
  const controller = new ProvisionController({
    api: serviceAccountApi,
    provisionerName,
    provisioner: backend,
    leaderElection: (options.leaderElection ?? false) && { namespace: account.namespace },
    rateLimiter: fastRetries,
    logger: silentLogger,
    ...(options.shutdownTimeoutMs === undefined ? {} : { shutdownTimeoutMs: options.shutdownTimeoutMs }),
  });
  const signal = new AbortController();
  const running = controller.run(signal.signal);
  let stopped: Promise<void> | undefined;
  const stop = () => {
    signal.abort();
    stopped ??= running;
    return stopped;
  };
  cleanups.push(stop);
  return { controller, stop };
}

async function createClass(provisioner: string): Promise<string> {
  const name = uniqueName('expandable');
  await admin.resource(resources.storageClasses).create({
    metadata: { name },
    provisioner,
    reclaimPolicy: 'Delete',
    volumeBindingMode: 'Immediate',
    allowVolumeExpansion: true,
  });
  cleanups.push(() =>
    admin
      .resource(resources.storageClasses)
      .delete(name)
      .catch(() => {}),
  );
  return name;
}

const claims = admin.resource(resources.persistentVolumeClaims);

/** Creates a claim of `size` and waits until it is bound. */
async function boundClaim(
  namespace: string,
  storageClassName: string,
  size = '1Mi',
): Promise<V1PersistentVolumeClaim> {
  const name = uniqueName('claim');
  await claims.create(
    {
      metadata: { name },
      spec: { storageClassName, accessModes: ['ReadWriteOnce'], resources: { requests: { storage: size } } },
    },
    { namespace },
  );
  return waitFor(
    async () => {
      const claim = await claims.get(name, { namespace });
      return claim.status?.phase === 'Bound' ? claim : undefined;
    },
    { timeoutMs: 60_000, description: `claim ${name} to be bound` },
  );
}

function request(claim: V1PersistentVolumeClaim, storage: string): Promise<V1PersistentVolumeClaim> {
  const { name = '', namespace = '' } = claim.metadata ?? {};
  return claims.patch(name, { spec: { resources: { requests: { storage } } } }, 'merge', { namespace });
}

/** Waits until the claim's status capacity is `storage`, and returns it. */
function capacityOf(claim: V1PersistentVolumeClaim, storage: string): Promise<V1PersistentVolumeClaim> {
  const { name = '', namespace = '' } = claim.metadata ?? {};
  return waitFor(
    async () => {
      const current = await claims.get(name, { namespace });
      return current.status?.capacity?.storage === storage ? current : undefined;
    },
    { timeoutMs: 60_000, description: `claim ${name} to have capacity ${storage}` },
  );
}

async function eventsOf(claim: V1PersistentVolumeClaim): Promise<CoreV1Event[]> {
  const list = await admin.resource(resources.events).list({ namespace: claim.metadata?.namespace ?? '' });
  return list.items.filter((event) => event.involvedObject.uid === claim.metadata?.uid);
}

/** Waits until the claim has events of every reason in `reasons`, and returns all of its events. */
function eventsWith(claim: V1PersistentVolumeClaim, reasons: readonly string[]): Promise<CoreV1Event[]> {
  return waitFor(
    async () => {
      const events = await eventsOf(claim);
      const seen = new Set(events.map((event) => event.reason));
      return reasons.every((reason) => seen.has(reason)) ? events : undefined;
    },
    { timeoutMs: 30_000, description: `events ${reasons.join(', ')}` },
  );
}

/** Occurrences of `reason` (an aggregated event counts each). */
const occurrences = (events: readonly CoreV1Event[], reason: string): number =>
  events.filter((event) => event.reason === reason).reduce((sum, event) => sum + (event.count ?? 1), 0);

const pvCapacity = async (claim: V1PersistentVolumeClaim): Promise<string | undefined> =>
  (await admin.resource(resources.persistentVolumes).get(claim.spec?.volumeName ?? '')).spec?.capacity
    ?.storage;

describe('one controller', () => {
  const backend = new SizedBackend();
  const provisionerName = `e2e.kube-provisioner.io/${uniqueName('expand')}`;
  let storageClassName = '';
  let namespace = '';
  let controller: ProvisionController | undefined;

  beforeAll(async () => {
    storageClassName = await createClass(provisionerName);
    namespace = await env.namespace('expansion');
    controller = startController(backend, provisionerName).controller;
  });

  it('expands a volume when its claim asks for more, and records the size on the PV and the claim', {
    timeout: 90_000,
  }, async () => {
    backend.script = async (options) => ({ capacity: options.capacity });
    const claim = await boundClaim(namespace, storageClassName);
    await request(claim, '2Mi');

    const resized = await capacityOf(claim, '2Mi');
    expect(await pvCapacity(claim)).toBe('2Mi');
    expect(backend.sizes.get(claim.spec?.volumeName ?? '')).toBe('2Mi');
    expect(resized.status?.allocatedResources).toEqual({ storage: '2Mi' });
    expect(resized.status?.allocatedResourceStatuses ?? {}).toEqual({});
    expect(resized.status?.conditions ?? []).toEqual([]);
    const events = await eventsWith(resized, ['ExternalExpanding', 'Resizing', 'VolumeResizeSuccessful']);
    expect(events.find((event) => event.reason === 'ExternalExpanding')?.message).toBe(
      'waiting for an external controller to expand this PVC',
    );
    expect(events.find((event) => event.reason === 'Resizing')?.message).toBe(
      `External resizer is resizing volume ${claim.spec?.volumeName}`,
    );
    expect(occurrences(events, 'VolumeResizeSuccessful')).toBe(1);
    // kube-controller-manager leaves claims of volumes it cannot expand to us: no resizer annotation.
    expect(resized.metadata?.annotations?.['volume.kubernetes.io/storage-resizer']).toBeUndefined();
    const metrics = await controller?.registry.getSingleMetricAsString(
      'controller_persistentvolumeclaim_resize_total',
    );
    expect(metrics).toContain(`controller_persistentvolumeclaim_resize_total{class="${storageClassName}"} 1`);
  });

  it('never passes a size below what the volume holds to expand: a warning, and the claim records the volume', {
    timeout: 90_000,
  }, async () => {
    const claim = await boundClaim(namespace, storageClassName);
    const calls = backend.expandCalls.length;
    // An administrator grew the PV by hand; the claim then asks for less than it holds.
    await admin
      .resource(resources.persistentVolumes)
      .patch(claim.spec?.volumeName ?? '', { spec: { capacity: { storage: '5Mi' } } }, 'merge');
    await request(claim, '2Mi');

    await capacityOf(claim, '5Mi');
    const events = await eventsWith(claim, ['VolumeResizeFailed']);
    expect(events.find((event) => event.reason === 'VolumeResizeFailed')?.message).toContain(
      'volumes are never shrunk',
    );
    expect(backend.expandCalls.length).toBe(calls);
    expect(await pvCapacity(claim)).toBe('5Mi');
  });

  it('retries a failing expand with growing delays until it succeeds', { timeout: 90_000 }, async () => {
    const claim = await boundClaim(namespace, storageClassName);
    const start = backend.expandCalls.length;
    let failures = 3;
    backend.script = async (options) =>
      failures-- > 0
        ? { error: new Error('backend busy'), state: 'Background' }
        : { capacity: options.capacity };
    await request(claim, '3Mi');

    await capacityOf(claim, '3Mi');
    const attempts = backend.expandCalls.slice(start).map((call) => call.atMs);
    expect(attempts).toHaveLength(4);
    // The first retry is immediate: the claim's status changed to ControllerResizeInProgress, which
    // queues it again (as external-resizer's update filter does). Then the per-claim backoff doubles.
    const gaps = attempts.slice(1).map((at, i) => at - (attempts[i] ?? at));
    expect([...gaps].sort((x, y) => x - y)).toEqual(gaps);
    expect(gaps[2]).toBeGreaterThanOrEqual(700);
    expect(backend.expandCalls.slice(start).every((call) => call.capacity === '3Mi')).toBe(true);
    const events = await eventsWith(claim, ['VolumeResizeFailed', 'VolumeResizeSuccessful']);
    expect(occurrences(events, 'VolumeResizeFailed')).toBe(3);
    expect(events.find((event) => event.reason === 'VolumeResizeFailed')?.message).toBe(
      `resize volume "${claim.spec?.volumeName}" by resizer "${provisionerName}" failed: backend busy`,
    );
  });

  it('recovers from a failed expansion when the claim asks for less again', { timeout: 90_000 }, async () => {
    const claim = await boundClaim(namespace, storageClassName);
    const start = backend.expandCalls.length;
    backend.script = async (options) =>
      options.capacity === '10Mi'
        ? { error: new InfeasibleError('only 4Mi left'), state: 'Finished' }
        : { capacity: options.capacity };
    await request(claim, '10Mi');

    const { name = '' } = claim.metadata ?? {};
    const failed = await waitFor(
      async () => {
        const current = await claims.get(name, { namespace });
        const statuses = current.status?.allocatedResourceStatuses;
        return statuses?.storage === 'ControllerResizeInfeasible' ? current : undefined;
      },
      { timeoutMs: 30_000, description: 'the claim to be marked infeasible' },
    );
    expect(failed.status?.allocatedResources).toEqual({ storage: '10Mi' });
    expect(failed.status?.conditions?.map((condition) => [condition.type, condition.message])).toEqual([
      ['Resizing', undefined],
      ['ControllerResizeError', 'failed to expand pvc with only 4Mi left'],
    ]);
    // The API server lets a request that failed come down again, as long as it stays above the capacity.
    await request(claim, '3Mi');

    const recovered = await capacityOf(claim, '3Mi');
    expect(await pvCapacity(claim)).toBe('3Mi');
    expect(recovered.status?.allocatedResources).toEqual({ storage: '3Mi' });
    expect(recovered.status?.allocatedResourceStatuses ?? {}).toEqual({});
    expect(recovered.status?.conditions ?? []).toEqual([]);
    // Infeasible is not retried on its own: attempts at 10Mi, then the lowered request ends it. A second
    // 10Mi attempt happens only when a sync queued by the first one's status writes read the claim from
    // the cache before its infeasible status arrived there.
    const calls = backend.expandCalls.slice(start).map((call) => call.capacity);
    expect(calls.at(-1)).toBe('3Mi');
    expect(calls.slice(0, -1)).toContain('10Mi');
    expect(calls.slice(0, -1).every((capacity) => capacity === '10Mi')).toBe(true);
    expect(calls.length).toBeLessThanOrEqual(3);
  });
});

it('completes a resize exactly once across a leader hand-over', { timeout: 180_000 }, async () => {
  const ids = { first: '', second: '' };
  const first = new SizedBackend(() => ids.first);
  const second = new SizedBackend(() => ids.second);
  const provisionerName = `e2e.kube-provisioner.io/${uniqueName('handover')}`;
  const storageClassName = await createClass(provisionerName);
  const namespace = await env.namespace('expansion-handover');
  // The first leader's expand hangs until its operation is aborted.
  first.script = (_options, context) =>
    new Promise((_resolve, reject) => {
      context.signal.addEventListener('abort', () => reject(context.signal.reason), { once: true });
    });

  const a = startController(first, provisionerName, { leaderElection: true, shutdownTimeoutMs: 1_000 });
  ids.first = a.controller.identity;
  const leases = admin.resource(resources.leases);
  await waitFor(
    async () =>
      (await leases.list({ namespace: account.namespace })).items.find(
        (item) => item.spec?.holderIdentity === a.controller.identity,
      ),
    { timeoutMs: 60_000, description: 'the first replica to lead' },
  );
  const b = startController(second, provisionerName, { leaderElection: true });
  ids.second = b.controller.identity;
  const claim = await boundClaim(namespace, storageClassName);
  await request(claim, '2Mi');
  await waitFor(() => first.expandCalls.length === 1, {
    timeoutMs: 30_000,
    description: 'the leader to expand',
  });
  const { name = '' } = claim.metadata ?? {};
  const inProgress = await claims.get(name, { namespace });
  expect(inProgress.status?.allocatedResourceStatuses).toEqual({ storage: 'ControllerResizeInProgress' });
  expect(inProgress.status?.allocatedResources).toEqual({ storage: '2Mi' });

  await a.stop();
  const resized = await capacityOf(claim, '2Mi');

  expect(await pvCapacity(claim)).toBe('2Mi');
  expect(resized.status?.allocatedResourceStatuses ?? {}).toEqual({});
  // The aborted call changed nothing; the successor's is the one expansion.
  expect(first.sizes.get(claim.spec?.volumeName ?? '')).toBe('1Mi');
  expect(second.sizes.get(claim.spec?.volumeName ?? '')).toBe('2Mi');
  expect(first.expandCalls.map((call) => call.by)).toEqual([a.controller.identity]);
  expect(second.expandCalls.map((call) => [call.by, call.capacity])).toEqual([
    [b.controller.identity, '2Mi'],
  ]);
  const events = await eventsWith(resized, ['VolumeResizeSuccessful']);
  expect(occurrences(events, 'VolumeResizeSuccessful')).toBe(1);
  expect(occurrences(events, 'VolumeResizeFailed')).toBe(0);
});
