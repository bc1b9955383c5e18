/**
 * VolumeAttributesClasses, data sources and the default finalizer on a real control plane (the real
 * PV binder, kube-apiserver validation): claims that name a VolumeAttributesClass bind to the (CSI)
 * PV the controller writes the class into; a class of another driver is refused; a volume
 * populator's claim is left alone; and with the library's default `addFinalizer: false` a PV carries
 * no finalizer of ours and is still deleted after release. The controller runs under the RBAC that
 * examples/custom-provisioner ships; any 403 fails the test.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { uniqueName } from '@kube-provisioner/testenv/testing';
import {
  CoreV1Api,
  type CoreV1Event,
  type KubernetesObject,
  KubernetesObjectApi,
  loadAllYaml,
  PatchStrategy,
  StorageV1Api,
  setHeaderOptions,
  type V1PersistentVolumeClaim,
} from '@kubernetes/client-node';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { isForbidden } from '../src/client/api-error.ts';
import { createKubeApi, type KubeApiClient } from '../src/client/kube-api.ts';
import { ProvisionController } from '../src/provision-controller.ts';
import { RecordingProvisioner } from '../src/testing/controller-harness.ts';
import { silentLogger } from '../src/util/logger.ts';
import { finalizerPV } from '../src/wire-names.ts';
import { ItemExponentialFailureRateLimiter } from '../src/workqueue/rate-limiters.ts';
import { useE2eCluster } from './support/e2e-cluster.ts';

const rbacManifest = join(import.meta.dirname, '../../../examples/custom-provisioner/rbac.yaml');

type RbacObject = KubernetesObject & {
  roleRef?: { kind: string; name: string };
  subjects?: { kind: string; name: string; namespace?: string }[];
};

/** The shipped RBAC objects, moved into `namespace`; cluster-scoped names get `suffix`. */
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
      ...(subjects === undefined ? {} : { subjects: subjects.map((subject) => ({ ...subject, namespace })) }),
    };
  });
}

/** `api`, recording every call the server answers 403, also through clients it derives. */
function recordingForbidden(api: KubeApiClient): KubeApiClient {
  return {
    withRateLimit: (limit) => recordingForbidden(api.withRateLimit(limit)),
    close: () => api.close(),
    resource(descriptor) {
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

/** Retries `check` until it stops throwing; generous, as other suites share the two cores. */
function until<T>(check: () => T | Promise<T>, timeout = 90_000): Promise<T> {
  return vi.waitFor(check, { timeout, interval: 250 });
}

const { env } = useE2eCluster();
const core = env.kubeConfig.makeApiClient(CoreV1Api);
const storage = env.kubeConfig.makeApiClient(StorageV1Api);
const kubeObjects = KubernetesObjectApi.makeApiClient(env.kubeConfig);

const suffix = uniqueName('issue28');
/** A provisioner name with a `/`, as the API accepts for a VolumeAttributesClass's driverName. */
const provisionerName = `${suffix}.kube-provisioner.io/in-memory`;
const className = `${suffix}-immediate`;
const attributeClasses = { ours: `${suffix}-gold`, foreign: `${suffix}-foreign`, late: `${suffix}-late` };
/**
 * Records its calls and returns CSI volumes: the API server accepts `spec.volumeAttributesClassName`
 * on no other PV. No CSI driver runs; the PV binder does not need one.
 */
class CsiProvisioner extends RecordingProvisioner {
  constructor() {
    super();
    this.provisionResult = ({ pvName, pvc, storageClass }) => ({
      pv: {
        metadata: { name: pvName },
        spec: {
          capacity: { storage: pvc.spec?.resources?.requests?.storage ?? '1Gi' },
          accessModes: [...(pvc.spec?.accessModes ?? [])],
          persistentVolumeReclaimPolicy: storageClass.reclaimPolicy ?? 'Delete',
          csi: { driver: 'in-memory.kube-provisioner.io', volumeHandle: pvName },
        },
      },
    });
  }

  supportsVolumeAttributesClasses(): boolean {
    return true;
  }
}

const provisioner = new CsiProvisioner();
const clusterObjects: RbacObject[] = [];
const forbidden: string[] = [];
const stop = new AbortController();
let serviceAccountApi: KubeApiClient | undefined;
let running: Promise<void> | undefined;

beforeAll(async () => {
  const controllerNamespace = await env.namespace('provisioner');
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
  await storage.createStorageClass({
    body: {
      metadata: { name: className },
      provisioner: provisionerName,
      reclaimPolicy: 'Delete',
      volumeBindingMode: 'Immediate',
    },
  });
  for (const [name, driverName] of [
    [attributeClasses.ours, provisionerName],
    [attributeClasses.foreign, 'ebs.csi.aws.com'],
  ] as const) {
    await storage.createVolumeAttributesClass({
      body: { metadata: { name }, driverName, parameters: { tier: 'gold' } },
    });
  }

  const controller = new ProvisionController({
    api: recordingForbidden(serviceAccountApi),
    provisionerName,
    provisioner,
    leaderElection: { namespace: controllerNamespace },
    // A claim whose class appears later is retried within the test's patience.
    rateLimiter: () => new ItemExponentialFailureRateLimiter(500, 5_000),
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
    storage.deleteStorageClass({ name: className }).catch(ignore),
    // The test control plane runs no vac-protection controller: its finalizer is taken off by hand.
    ...Object.values(attributeClasses).map((name) =>
      storage
        .patchVolumeAttributesClass(
          { name, body: { metadata: { finalizers: null } } },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        )
        .then(() => storage.deleteVolumeAttributesClass({ name }))
        .catch(ignore),
    ),
    ...clusterObjects.map((object) => kubeObjects.delete(object).catch(ignore)),
  ]);
});

afterEach(() => {
  expect(forbidden).toEqual([]);
});

function createClaim(
  namespace: string,
  name: string,
  spec: Partial<NonNullable<V1PersistentVolumeClaim['spec']>> = {},
): Promise<V1PersistentVolumeClaim> {
  return core.createNamespacedPersistentVolumeClaim({
    namespace,
    body: {
      metadata: { name },
      spec: {
        accessModes: ['ReadWriteOnce'],
        resources: { requests: { storage: '1Gi' } },
        storageClassName: className,
        ...spec,
      },
    },
  });
}

function boundClaim(namespace: string, name: string): Promise<V1PersistentVolumeClaim> {
  return until(async () => {
    const claim = await core.readNamespacedPersistentVolumeClaim({ namespace, name });
    expect(claim.status?.phase).toBe('Bound');
    return claim;
  });
}

/** Events about the claim with `uid` and `reason`, once there is at least one. */
function eventsOf(namespace: string, uid: string | undefined, reason: string): Promise<CoreV1Event[]> {
  return until(async () => {
    const { items } = await core.listNamespacedEvent({
      namespace,
      fieldSelector: `involvedObject.uid=${uid},reason=${reason}`,
    });
    expect(items.length).toBeGreaterThan(0);
    return items;
  });
}

const callsFor = (claim: V1PersistentVolumeClaim) =>
  provisioner.provisionCalls.filter((call) => call.pvc.metadata?.uid === claim.metadata?.uid);

describe('claims with a VolumeAttributesClass or a data source, on a real control plane', () => {
  it('binds a claim that names a VolumeAttributesClass to a PV carrying the class', async () => {
    const namespace = await env.namespace('vac');
    const created = await createClaim(namespace, 'data', {
      volumeAttributesClassName: attributeClasses.ours,
    });
    const claim = await boundClaim(namespace, 'data');
    const volume = await core.readPersistentVolume({ name: claim.spec?.volumeName ?? '' });
    expect(volume.spec?.volumeAttributesClassName).toBe(attributeClasses.ours);
    expect(claim.status?.currentVolumeAttributesClassName).toBe(attributeClasses.ours);
    expect(callsFor(created).map((call) => call.volumeAttributesClass?.parameters)).toEqual([
      { tier: 'gold' },
    ]);
  });

  it('refuses a class of another driver with one ProvisioningFailed event and no PV', async () => {
    const namespace = await env.namespace('foreign');
    const created = await createClaim(namespace, 'data', {
      volumeAttributesClassName: attributeClasses.foreign,
    });
    const events = await eventsOf(namespace, created.metadata?.uid, 'ProvisioningFailed');
    expect(events.map((event) => [event.type, event.count, event.message])).toEqual([
      [
        'Warning',
        1,
        `VolumeAttributesClass "${attributeClasses.foreign}" referenced in the claim is for driver "ebs.csi.aws.com", which does not match driver name "${provisionerName}"`,
      ],
    ]);
    expect(callsFor(created)).toEqual([]);
    const { items } = await core.listPersistentVolume();
    expect(items.filter((pv) => pv.spec?.claimRef?.uid === created.metadata?.uid)).toEqual([]);
    expect((await core.readNamespacedPersistentVolumeClaim({ namespace, name: 'data' })).status?.phase).toBe(
      'Pending',
    );
  });

  it('retries a claim whose class does not exist yet, naming it, and binds it once it does', async () => {
    const namespace = await env.namespace('late');
    const created = await createClaim(namespace, 'data', {
      volumeAttributesClassName: attributeClasses.late,
    });
    const [event] = await eventsOf(namespace, created.metadata?.uid, 'ProvisioningFailed');
    expect(event?.message).toBe(
      `volumeattributesclasses.storage.k8s.io "${attributeClasses.late}" not found`,
    );
    await storage.createVolumeAttributesClass({
      body: {
        metadata: { name: attributeClasses.late },
        driverName: provisionerName,
        parameters: { tier: 'silver' },
      },
    });
    const claim = await boundClaim(namespace, 'data');
    const volume = await core.readPersistentVolume({ name: claim.spec?.volumeName ?? '' });
    expect(volume.spec?.volumeAttributesClassName).toBe(attributeClasses.late);
  });

  it("leaves a volume populator's claim without a PV while an ordinary claim of the same class is Bound", async () => {
    const namespace = await env.namespace('populator');
    const populated = await createClaim(namespace, 'populated', {
      dataSourceRef: { apiGroup: 'example.com', kind: 'Dataset', name: 'd1' },
    });
    await createClaim(namespace, 'plain');
    await boundClaim(namespace, 'plain');
    const [event] = await eventsOf(namespace, populated.metadata?.uid, 'Provisioning');
    expect(event).toMatchObject({
      type: 'Normal',
      message: 'Assuming an external populator will provision the volume',
    });
    const { items } = await core.listNamespacedEvent({
      namespace,
      fieldSelector: `involvedObject.uid=${populated.metadata?.uid},type=Warning`,
    });
    expect(items).toEqual([]);
    expect(callsFor(populated)).toEqual([]);
    const claim = await core.readNamespacedPersistentVolumeClaim({ namespace, name: 'populated' });
    expect(claim.status?.phase).toBe('Pending');
    expect(claim.spec?.volumeName ?? '').toBe('');
  });

  it("puts no finalizer of ours on a PV with the library's default, and still deletes it after release", async () => {
    const namespace = await env.namespace('finalizer');
    await createClaim(namespace, 'data');
    const claim = await boundClaim(namespace, 'data');
    const name = claim.spec?.volumeName ?? '';
    expect((await core.readPersistentVolume({ name })).metadata?.finalizers ?? []).not.toContain(finalizerPV);
    await core.deleteNamespacedPersistentVolumeClaim({ namespace, name: 'data' });
    await until(() => expect(core.readPersistentVolume({ name })).rejects.toMatchObject({ code: 404 }));
    expect(provisioner.deleteCalls.filter((pv) => pv.metadata?.name === name)).toHaveLength(1);
  });
});
