/**
 * The ProvisionController against a real control plane (kube-testenv): kube-apiserver with RBAC,
 * the real PV binder and scheduler. The controller runs in this process under a ServiceAccount bound
 * to exactly the RBAC objects examples/custom-provisioner ships; any 403 it meets fails the test.
 * Claims, pods and nodes are made with the admin client, as a user and the scheduler would.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { uniqueName, useTestEnv } from '@kube-provisioner/testenv/testing';
import {
  CoordinationV1Api,
  CoreV1Api,
  type KubernetesObject,
  KubernetesObjectApi,
  loadAllYaml,
  PatchStrategy,
  StorageV1Api,
  setHeaderOptions,
  type V1PersistentVolume,
  type V1PersistentVolumeClaim,
} from '@kubernetes/client-node';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { isForbidden } from '../src/client/api-error.ts';
import { createKubeApi, type KubeApiClient } from '../src/client/kube-api.ts';
import {
  type KubeObject,
  type ResourceClient,
  type ResourceDescriptor,
  resources,
} from '../src/client/resource-client.ts';
import { ProvisionController } from '../src/provision-controller.ts';
import type { Provisioner, ProvisionOptions, ProvisionResult } from '../src/provisioner.ts';
import { silentLogger } from '../src/util/logger.ts';
import { annDynamicallyProvisioned, annSelectedNode, finalizerPV } from '../src/wire-names.ts';

const rbacManifest = join(import.meta.dirname, '../../../examples/custom-provisioner/rbac.yaml');
/** Claim annotation telling the test provisioner how to answer: `fail` or `reschedule`. */
const annBehaviour = 'e2e.kube-provisioner.io/behaviour';
const failureMessage = 'backend refused the volume: quota of 0 volumes exceeded';

/** A provisioner whose storage assets live in a map; it records every call. */
class InMemoryProvisioner implements Provisioner {
  /** Storage assets: PV name → UID of the claim it was made for. */
  readonly assets = new Map<string, string>();
  readonly provisionCalls: ProvisionOptions[] = [];
  /** Names of the PVs `delete` was called for, once per call. */
  readonly deleteCalls: string[] = [];
  /** Every PV the controller considered deleting, as it was at the time. */
  readonly deletionCandidates: V1PersistentVolume[] = [];

  async provision(options: ProvisionOptions): Promise<ProvisionResult> {
    this.provisionCalls.push(options);
    const behaviour = options.pvc.metadata?.annotations?.[annBehaviour];
    if (behaviour === 'fail') return { error: new Error(failureMessage), state: 'Finished' };
    if (behaviour === 'reschedule') {
      return { error: new Error('the selected node is out of space'), state: 'Reschedule' };
    }
    this.assets.set(options.pvName, options.pvc.metadata?.uid ?? '');
    return { pv: volumeFor(options) };
  }

  async delete(pv: Readonly<V1PersistentVolume>): Promise<void> {
    const name = pv.metadata?.name ?? '';
    this.deleteCalls.push(name);
    this.assets.delete(name);
  }

  shouldDelete(pv: Readonly<V1PersistentVolume>): boolean {
    this.deletionCandidates.push(pv);
    return true;
  }

  callsFor(claim: V1PersistentVolumeClaim): ProvisionOptions[] {
    return this.provisionCalls.filter((call) => call.pvc.metadata?.uid === claim.metadata?.uid);
  }

  deletesOf(name: string): number {
    return this.deleteCalls.filter((called) => called === name).length;
  }
}

function volumeFor({ pvName, pvc, storageClass, selectedNodeName }: ProvisionOptions): V1PersistentVolume {
  return {
    metadata: { name: pvName },
    spec: {
      capacity: { storage: pvc.spec?.resources?.requests?.storage ?? '1Gi' },
      accessModes: [...(pvc.spec?.accessModes ?? [])],
      persistentVolumeReclaimPolicy: storageClass.reclaimPolicy ?? 'Delete',
      volumeMode: pvc.spec?.volumeMode ?? 'Filesystem',
      hostPath: { path: `/srv/e2e/${pvName}` },
      ...(selectedNodeName
        ? {
            nodeAffinity: {
              required: {
                nodeSelectorTerms: [
                  {
                    matchExpressions: [
                      { key: 'kubernetes.io/hostname', operator: 'In', values: [selectedNodeName] },
                    ],
                  },
                ],
              },
            },
          }
        : {}),
    },
  };
}

/** `api`, recording every call the server answers 403, also through clients it derives. */
function recordingForbidden(api: KubeApiClient, forbidden: string[]): KubeApiClient {
  return {
    withRateLimit: (limit) => recordingForbidden(api.withRateLimit(limit), forbidden),
    close: () => api.close(),
    resource<T extends KubeObject>(descriptor: ResourceDescriptor<T>): ResourceClient<T> {
      const client = api.resource(descriptor);
      const record = <R>(verb: string, call: Promise<R>): Promise<R> =>
        call.catch((err: unknown) => {
          if (isForbidden(err)) forbidden.push(`${verb} ${descriptor.plural}: ${(err as Error).message}`);
          throw err;
        });
      return {
        descriptor: client.descriptor,
        get: (name, options) => record('get', client.get(name, options)),
        list: (options) => record('list', client.list(options)),
        watch: (options, onEvent) => record('watch', client.watch(options, onEvent)),
        create: (object, options) => record('create', client.create(object, options)),
        update: (object, options) => record('update', client.update(object, options)),
        patch: (name, patch, type, options) => record('patch', client.patch(name, patch, type, options)),
        delete: (name, options) => record('delete', client.delete(name, options)),
      };
    },
  };
}

type RbacObject = KubernetesObject & {
  roleRef?: { kind: string; name: string };
  subjects?: { kind: string; name: string; namespace?: string }[];
};

/**
 * The shipped RBAC objects with their rules untouched, moved into `namespace`; cluster-scoped names
 * get `suffix` so that runs never share a ClusterRole.
 */
function shippedRbac(namespace: string, suffix: string): RbacObject[] {
  const documents = loadAllYaml(readFileSync(rbacManifest, 'utf8')) as RbacObject[];
  return documents.map((document) => {
    const clusterScoped = document.kind?.startsWith('Cluster') ?? false;
    const { roleRef, subjects } = document;
    return {
      ...document,
      metadata: clusterScoped
        ? { ...document.metadata, name: `${document.metadata?.name}-${suffix}` }
        : { ...document.metadata, namespace },
      ...(roleRef?.kind === 'ClusterRole'
        ? { roleRef: { ...roleRef, name: `${roleRef.name}-${suffix}` } }
        : {}),
      ...(subjects === undefined
        ? {}
        : {
            subjects: subjects.map((subject) =>
              subject.kind === 'ServiceAccount' ? { ...subject, namespace } : subject,
            ),
          }),
    };
  });
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Retries `check` until it stops throwing; generous, as other suites share the two cores. */
function until<T>(check: () => T | Promise<T>, timeout = 90_000): Promise<T> {
  return vi.waitFor(check, { timeout, interval: 250 });
}

const env = useTestEnv();
const core = env.kubeConfig.makeApiClient(CoreV1Api);
const storage = env.kubeConfig.makeApiClient(StorageV1Api);
const coordination = env.kubeConfig.makeApiClient(CoordinationV1Api);
const kubeObjects = KubernetesObjectApi.makeApiClient(env.kubeConfig);

const suffix = uniqueName('e2e');
const provisionerName = `${suffix}.kube-provisioner.io/in-memory`;
const classes = { delete: `${suffix}-delete`, retain: `${suffix}-retain`, wffc: `${suffix}-wffc` } as const;
const provisioner = new InMemoryProvisioner();
const forbidden: string[] = [];
const clusterObjects: RbacObject[] = [];
/** PVs the tests leave behind on purpose (reclaim Retain). */
const retainedVolumes: string[] = [];
const stop = new AbortController();
let serviceAccountApi: KubeApiClient | undefined;
let controller: ProvisionController;
let running: Promise<void> | undefined;
let controllerNamespace = '';
let metricsBase = '';

beforeAll(async () => {
  controllerNamespace = await env.namespace('provisioner');
  const rbac = shippedRbac(controllerNamespace, suffix);
  for (const object of rbac) {
    await kubeObjects.create(object);
    if (object.kind?.startsWith('Cluster')) clusterObjects.push(object);
  }
  const account = rbac.find((object) => object.kind === 'ServiceAccount')?.metadata?.name ?? '';
  const { kubeConfig } = await env.serviceAccountKubeconfig({
    namespace: controllerNamespace,
    name: account,
  });
  serviceAccountApi = createKubeApi(kubeConfig);

  const reclaim = { delete: 'Delete', retain: 'Retain', wffc: 'Delete' } as const;
  for (const [kind, name] of Object.entries(classes) as [keyof typeof classes, string][]) {
    await storage.createStorageClass({
      body: {
        metadata: { name },
        provisioner: provisionerName,
        reclaimPolicy: reclaim[kind],
        volumeBindingMode: kind === 'wffc' ? 'WaitForFirstConsumer' : 'Immediate',
      },
    });
  }

  const port = await freePort();
  metricsBase = `http://127.0.0.1:${port}`;
  controller = new ProvisionController({
    api: recordingForbidden(serviceAccountApi, forbidden),
    provisionerName,
    provisioner,
    addFinalizer: true,
    leaderElection: { namespace: controllerNamespace },
    metricsServer: { port, address: '127.0.0.1' },
    logger: silentLogger,
  });
  running = controller.run(stop.signal);
});

afterAll(async () => {
  stop.abort();
  await running?.catch(() => undefined);
  await serviceAccountApi?.close();
  const ignore = (): void => {};
  await Promise.all([
    ...Object.values(classes).map((name) => storage.deleteStorageClass({ name }).catch(ignore)),
    ...retainedVolumes.map((name) => core.deletePersistentVolume({ name }).catch(ignore)),
    ...clusterObjects.map((object) => kubeObjects.delete(object).catch(ignore)),
  ]);
});

afterEach(() => {
  expect(forbidden).toEqual([]);
});

function createClaim(
  namespace: string,
  name: string,
  storageClassName: string,
  annotations: Record<string, string> = {},
): Promise<V1PersistentVolumeClaim> {
  return core.createNamespacedPersistentVolumeClaim({
    namespace,
    body: {
      metadata: { name, annotations },
      spec: {
        accessModes: ['ReadWriteOnce'],
        resources: { requests: { storage: '1Gi' } },
        storageClassName,
      },
    },
  });
}

function readClaim(namespace: string, name: string): Promise<V1PersistentVolumeClaim> {
  return core.readNamespacedPersistentVolumeClaim({ namespace, name });
}

function boundClaim(namespace: string, name: string): Promise<V1PersistentVolumeClaim> {
  return until(async () => {
    const claim = await readClaim(namespace, name);
    expect(claim.status?.phase).toBe('Bound');
    return claim;
  });
}

async function volumeGone(name: string): Promise<void> {
  await until(() => expect(core.readPersistentVolume({ name })).rejects.toMatchObject({ code: 404 }));
}

describe('ProvisionController on a real control plane', () => {
  it('runs under the shipped RBAC only', async () => {
    await expect(serviceAccountApi?.resource(resources.nodes).list()).rejects.toSatisfy(isForbidden);
    const lease = await until(async () => {
      const found = await coordination.readNamespacedLease({
        namespace: controllerNamespace,
        name: controller.lease.split('/')[1] ?? '',
      });
      expect(found.spec?.holderIdentity).toBe(controller.identity);
      return found;
    });
    expect(lease.metadata?.namespace).toBe(controllerNamespace);
  });

  it('provisions an Immediate claim that gets Bound, and deletes its volume once after release', async () => {
    const namespace = await env.namespace('immediate');
    const created = await createClaim(namespace, 'data', classes.delete);
    const claim = await boundClaim(namespace, 'data');
    const name = `pvc-${created.metadata?.uid}`;
    expect(claim.spec?.volumeName).toBe(name);
    const volume = await core.readPersistentVolume({ name });
    expect(volume.status?.phase).toBe('Bound');
    expect(volume.spec?.claimRef).toMatchObject({ namespace, name: 'data', uid: created.metadata?.uid });
    expect(volume.metadata?.annotations?.[annDynamicallyProvisioned]).toBe(provisionerName);
    expect(volume.metadata?.finalizers).toContain(finalizerPV);
    expect(provisioner.assets.get(name)).toBe(created.metadata?.uid);

    await core.deleteNamespacedPersistentVolumeClaim({ namespace, name: 'data' });
    // The PV disappears only once the controller has taken its finalizer off after the delete.
    await volumeGone(name);
    expect(provisioner.deletesOf(name)).toBe(1);
    expect(provisioner.assets.has(name)).toBe(false);
  });

  it('takes the finalizer off a Retain volume and leaves it alone once Released', async () => {
    const namespace = await env.namespace('retain');
    const created = await createClaim(namespace, 'data', classes.retain);
    await boundClaim(namespace, 'data');
    const name = `pvc-${created.metadata?.uid}`;
    retainedVolumes.push(name);
    await until(async () => {
      const volume = await core.readPersistentVolume({ name });
      expect(volume.metadata?.finalizers ?? []).not.toContain(finalizerPV);
    });

    await core.deleteNamespacedPersistentVolumeClaim({ namespace, name: 'data' });
    const seen = (released: (volume: V1PersistentVolume) => boolean) => () =>
      expect(provisioner.deletionCandidates.some((v) => v.metadata?.name === name && released(v))).toBe(true);
    await until(seen((volume) => volume.status?.phase === 'Released'));
    // One key is synced by one worker at a time: once a later change of the PV is seen, the sync of
    // the Released PV has finished.
    await core.patchPersistentVolume(
      { name, body: { metadata: { labels: { 'e2e.kube-provisioner.io/barrier': 'passed' } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await until(seen((volume) => volume.metadata?.labels?.['e2e.kube-provisioner.io/barrier'] === 'passed'));
    expect(provisioner.deletesOf(name)).toBe(0);
    expect(provisioner.assets.get(name)).toBe(created.metadata?.uid);
    const kept = await core.readPersistentVolume({ name });
    expect(kept.status?.phase).toBe('Released');
    expect(kept.metadata?.finalizers ?? []).not.toContain(finalizerPV);
  });

  it('provisions a WaitForFirstConsumer claim on the node the scheduler selects', async () => {
    const node = await env.createNode();
    const nodeName = node.metadata?.name ?? '';
    const namespace = await env.namespace('wffc');
    const created = await createClaim(namespace, 'data', classes.wffc);
    await core.createNamespacedPod({
      namespace,
      body: {
        metadata: { name: 'consumer' },
        spec: {
          nodeSelector: { 'kubernetes.io/hostname': nodeName },
          containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }],
          volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }],
        },
      },
    });
    const claim = await boundClaim(namespace, 'data');
    expect(claim.metadata?.annotations?.[annSelectedNode]).toBe(nodeName);
    expect(provisioner.callsFor(created).map((call) => call.selectedNodeName)).toEqual([nodeName]);
    // With the volume bound, the scheduler binds the pod to the node.
    await until(async () =>
      expect((await core.readNamespacedPod({ namespace, name: 'consumer' })).spec?.nodeName).toBe(nodeName),
    );

    await core.deleteNamespacedPod({ namespace, name: 'consumer', gracePeriodSeconds: 0 });
    await core.deleteNamespacedPersistentVolumeClaim({ namespace, name: 'data' });
    const name = `pvc-${created.metadata?.uid}`;
    await volumeGone(name);
    expect(provisioner.deletesOf(name)).toBe(1);
  });

  it('removes only the selected-node annotation when the provisioner asks to reschedule', async () => {
    const namespace = await env.namespace('reschedule');
    const created = await createClaim(namespace, 'data', classes.wffc, {
      [annSelectedNode]: 'node-out-of-space',
      [annBehaviour]: 'reschedule',
    });
    const claim = await until(async () => {
      const current = await readClaim(namespace, 'data');
      expect(current.metadata?.annotations?.[annSelectedNode]).toBeUndefined();
      return current;
    });
    expect(provisioner.callsFor(created).map((call) => call.selectedNodeName)).toEqual(['node-out-of-space']);
    expect(claim.metadata?.annotations?.[annBehaviour]).toBe('reschedule');
    expect(claim.status?.phase).toBe('Pending');
  });

  it('reports a provisioner error as a ProvisioningFailed Warning event on the claim', async () => {
    const namespace = await env.namespace('failure');
    const created = await createClaim(namespace, 'data', classes.delete, { [annBehaviour]: 'fail' });
    const event = await until(async () => {
      const { items } = await core.listNamespacedEvent({
        namespace,
        fieldSelector: `involvedObject.uid=${created.metadata?.uid},reason=ProvisioningFailed`,
      });
      expect(items).toHaveLength(1);
      return items[0];
    });
    expect(event).toMatchObject({
      type: 'Warning',
      message: failureMessage,
      involvedObject: { kind: 'PersistentVolumeClaim', namespace, name: 'data' },
      source: { component: `${provisionerName}_${controller.identity}` },
    });
    expect((await readClaim(namespace, 'data')).status?.phase).toBe('Pending');
    expect(provisioner.assets.has(`pvc-${created.metadata?.uid}`)).toBe(false);
    await core.deleteNamespacedPersistentVolumeClaim({ namespace, name: 'data' });
  });

  it('provisions 200 concurrent claims into exactly 200 volumes and assets, and deletes them all', async () => {
    const namespace = await env.namespace('scale');
    const count = 200;
    const created = await Promise.all(
      Array.from({ length: count }, (_, i) => createClaim(namespace, `claim-${i}`, classes.delete)),
    );
    const uids = new Set(created.map((claim) => claim.metadata?.uid ?? ''));
    const ours = async (): Promise<V1PersistentVolume[]> =>
      (await core.listPersistentVolume()).items.filter((pv) => pv.spec?.claimRef?.namespace === namespace);
    const assetsOfNamespace = (): string[] =>
      [...provisioner.assets].filter(([, uid]) => uids.has(uid)).map(([name]) => name);

    // The PV binder sets the pace (kube-controller-manager's client is throttled to 20 QPS): here the
    // volumes exist after some 12 s and all claims are Bound after some 50 s.
    await until(async () => {
      const { items } = await core.listNamespacedPersistentVolumeClaim({ namespace });
      expect(items.filter((claim) => claim.status?.phase === 'Bound')).toHaveLength(count);
    }, 180_000);
    const volumes = await ours();
    expect(volumes).toHaveLength(count);
    expect(new Set(volumes.map((pv) => pv.spec?.claimRef?.uid))).toEqual(uids);
    const names = volumes.map((pv) => pv.metadata?.name ?? '').sort();
    expect(assetsOfNamespace().sort()).toEqual(names);

    await core.deleteCollectionNamespacedPersistentVolumeClaim({ namespace });
    await until(async () => expect(await ours()).toEqual([]), 120_000);
    expect(assetsOfNamespace()).toEqual([]);
    expect(names.filter((name) => provisioner.deletesOf(name) !== 1)).toEqual([]);
  }, 300_000);

  it('serves probes and metrics while leading, and releases the Lease on a graceful stop', async () => {
    expect((await fetch(`${metricsBase}/readyz`)).status).toBe(200);
    expect((await fetch(`${metricsBase}/healthz`)).status).toBe(200);
    const metrics = await (await fetch(`${metricsBase}/metrics`)).text();
    const leaseName = controller.lease.split('/')[1];
    expect(metrics).toContain(`leader_election_master_status{name="${leaseName}"} 1`);
    expect(metrics).toMatch(
      new RegExp(`^controller_persistentvolume_delete_total\\{class="${classes.delete}"\\} 201$`, 'm'),
    );

    stop.abort();
    await running;
    const lease = await coordination.readNamespacedLease({
      namespace: controllerNamespace,
      name: leaseName ?? '',
    });
    expect(lease.spec?.holderIdentity ?? '').toBe('');
    await expect(fetch(`${metricsBase}/readyz`)).rejects.toThrow();
  });
});
