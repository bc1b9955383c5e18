/** Objects, provisioners and a harness shared by the ProvisionController tests. */
import type { V1PersistentVolume, V1PersistentVolumeClaim, V1StorageClass } from '@kubernetes/client-node';
import type { Registry } from 'prom-client';
import { afterEach, vi } from 'vitest';
import { resources } from '../src/client/resource-client.ts';
import type { ProvisionControllerOptions } from '../src/controller/options.ts';
import { ProvisionController } from '../src/provision-controller.ts';
import type { OperationContext, Provisioner, ProvisionOptions, ProvisionResult } from '../src/provisioner.ts';
import { FakeKubeApi } from '../src/testing/fake-api.ts';
import { ManualClock } from '../src/testing/manual-clock.ts';
import { silentLogger } from '../src/util/logger.ts';
import { annDynamicallyProvisioned, annStorageProvisioner } from '../src/wire-names.ts';

export const provisionerName = 'foo.bar/baz';

export function newStorageClass(
  name: string,
  provisioner: string,
  extra: Partial<V1StorageClass> = {},
): V1StorageClass {
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name, uid: `uid-${name}` },
    provisioner,
    reclaimPolicy: 'Delete',
    ...extra,
  };
}

export function newClaim(
  name: string,
  uid: string,
  className: string,
  provisioner: string | undefined,
  volumeName = '',
  annotations: Record<string, string> = {},
): V1PersistentVolumeClaim {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name,
      namespace: 'default',
      uid,
      annotations:
        provisioner === undefined ? annotations : { [annStorageProvisioner]: provisioner, ...annotations },
    },
    spec: {
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: '1Gi' } },
      storageClassName: className,
      ...(volumeName ? { volumeName } : {}),
    },
  };
}

export function newVolume(
  name: string,
  phase: string,
  policy: string,
  annotations: Record<string, string>,
  extra: { finalizers?: string[]; deletionTimestamp?: Date; csiDriver?: string } = {},
): V1PersistentVolume {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: {
      name,
      uid: `uid-${name}`,
      annotations,
      ...(extra.finalizers ? { finalizers: extra.finalizers } : {}),
      ...(extra.deletionTimestamp ? { deletionTimestamp: extra.deletionTimestamp } : {}),
    },
    spec: {
      persistentVolumeReclaimPolicy: policy,
      capacity: { storage: '1Gi' },
      accessModes: ['ReadWriteOnce'],
      ...(extra.csiDriver
        ? { csi: { driver: extra.csiDriver, volumeHandle: name } }
        : { hostPath: { path: `/tmp/${name}` } }),
    },
    status: { phase },
  };
}

export const dynamicallyProvisioned = (by: string): Record<string, string> => ({
  [annDynamicallyProvisioned]: by,
});

/** A provisioner that records its calls; behaviour per call is configurable. */
export class TestProvisioner implements Provisioner {
  readonly provisionCalls: ProvisionOptions[] = [];
  readonly deleteCalls: V1PersistentVolume[] = [];
  provisionResult: (options: ProvisionOptions) => ProvisionResult | Promise<ProvisionResult> = (options) => ({
    pv: volumeFor(options),
  });
  deleteResult: (pv: V1PersistentVolume) => void | Promise<void> = () => {};

  async provision(options: ProvisionOptions, _context: OperationContext): Promise<ProvisionResult> {
    this.provisionCalls.push(options);
    return this.provisionResult(options);
  }

  async delete(pv: Readonly<V1PersistentVolume>): Promise<void> {
    this.deleteCalls.push(pv);
    await this.deleteResult(pv);
  }
}

/** The PV a well-behaved provisioner returns. */
export function volumeFor(options: ProvisionOptions): V1PersistentVolume {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name: options.pvName },
    spec: {
      persistentVolumeReclaimPolicy: options.storageClass.reclaimPolicy ?? 'Delete',
      accessModes: [...(options.pvc.spec?.accessModes ?? [])],
      capacity: { storage: options.pvc.spec?.resources?.requests?.storage ?? '1Gi' },
      hostPath: { path: `/tmp/${options.pvName}` },
    },
  };
}

/** Options of a {@link Harness}: the controller's, the objects to seed and the fake API to use. */
export type HarnessOptions = Partial<ProvisionControllerOptions> & {
  objects?: readonly object[];
  api?: FakeKubeApi;
};

/** A controller on a fake API, run without leader election until {@link Harness.stop}. */
export class Harness {
  readonly api: FakeKubeApi;
  readonly controller: ProvisionController;
  readonly provisioner: TestProvisioner;
  readonly #stop = new AbortController();
  #done: Promise<void> | undefined;

  constructor(options: HarnessOptions = {}) {
    this.api = options.api ?? new FakeKubeApi();
    this.provisioner = new TestProvisioner();
    for (const object of options.objects ?? []) seed(this.api, object);
    const { objects: _objects, ...rest } = options;
    this.controller = new ProvisionController({
      provisionerName,
      provisioner: this.provisioner,
      leaderElection: false,
      logger: silentLogger,
      ...rest,
      api: this.api,
    });
  }

  get registry(): Registry {
    return this.controller.registry;
  }

  start(): this {
    this.#done = this.controller.run(this.#stop.signal);
    return this;
  }

  async stop(): Promise<void> {
    this.#stop.abort();
    await this.#done;
  }

  volumes(): V1PersistentVolume[] {
    return this.api.objects(resources.persistentVolumes);
  }

  claims(): V1PersistentVolumeClaim[] {
    return this.api.objects(resources.persistentVolumeClaims);
  }

  /** Events written so far, as `reason: message`. */
  events(): string[] {
    return this.api.objects(resources.events).map((event) => `${event.reason}: ${event.message}`);
  }
}

/** Makes harnesses that are stopped after each test. */
export interface Harnesses {
  /** A harness, not started yet (e.g. to add reactors first). */
  create(options?: HarnessOptions): Harness;
  /** A started harness. */
  start(options?: HarnessOptions): Harness;
}

/** Stops the harnesses a file makes after each of its tests. Call once per file, outside tests. */
export function useHarnesses(): Harnesses {
  let made: Harness[] = [];
  afterEach(async () => {
    const stopping = made;
    made = [];
    await Promise.all(stopping.map((harness) => harness.stop()));
  });
  const create = (options: HarnessOptions = {}): Harness => {
    const harness = new Harness(options);
    made.push(harness);
    return harness;
  };
  return { create, start: (options) => create(options).start() };
}

/** A harness whose controller and fake API run on a {@link ManualClock}. */
export function manualHarness(options: HarnessOptions = {}): {
  clock: ManualClock;
  api: FakeKubeApi;
  h: Harness;
} {
  const clock = new ManualClock(1_700_000_000_000);
  const api = new FakeKubeApi({ clock });
  return { clock, api, h: new Harness({ clock, api, ...options }) };
}

/** Advances the manual clock in small steps, letting async work run between them. */
export async function pump(clock: ManualClock, ms: number, step = 100): Promise<void> {
  for (let elapsed = 0; elapsed < ms; elapsed += step) {
    clock.advance(step);
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
  }
}

function seed(api: FakeKubeApi, object: object): void {
  const kind = (object as { kind?: string }).kind;
  if (kind === 'StorageClass') api.seed(resources.storageClasses, object as V1StorageClass);
  else if (kind === 'PersistentVolumeClaim')
    api.seed(resources.persistentVolumeClaims, object as V1PersistentVolumeClaim);
  else if (kind === 'PersistentVolume') api.seed(resources.persistentVolumes, object as V1PersistentVolume);
  else throw new Error(`cannot seed ${kind}`);
}

/** Metric samples as `name{labels} value`, zero-valued histogram buckets left out. */
export async function metricValue(
  registry: Registry,
  name: string,
  labels: Record<string, string>,
): Promise<number> {
  const metric = registry.getSingleMetric(name);
  if (metric === undefined) throw new Error(`no metric ${name}`);
  const { values } = await metric.get();
  const match = values.find(
    (value) =>
      Object.entries(labels).every(([key, v]) => value.labels[key] === v) &&
      Object.keys(value.labels).length === Object.keys(labels).length,
  );
  return match?.value ?? 0;
}

/** Provision counters of class `cls` as `{ success, failed }`. */
export async function provisionCounts(
  registry: Registry,
  cls: string,
): Promise<{ success: number; failed: number }> {
  const labels = { class: cls, source: '' };
  return {
    success: await metricValue(registry, 'controller_persistentvolumeclaim_provision_total', labels),
    failed: await metricValue(registry, 'controller_persistentvolumeclaim_provision_failed_total', labels),
  };
}

/** Delete counters of class `cls`. */
export async function deleteCounts(
  registry: Registry,
  cls: string,
): Promise<{ success: number; failed: number }> {
  return {
    success: await metricValue(registry, 'controller_persistentvolume_delete_total', { class: cls }),
    failed: await metricValue(registry, 'controller_persistentvolume_delete_failed_total', { class: cls }),
  };
}

/** Waits (real time, bounded) until `check` stops throwing. */
export function eventually<T>(check: () => T | Promise<T>): Promise<T> {
  return vi.waitFor(check, { timeout: 3000, interval: 5 });
}

/** Items the named queue has finished (`done`) so far, from its work-duration histogram. */
export async function processedItems(registry: Registry, queue: string): Promise<number> {
  const metric = registry.getSingleMetric('workqueue_work_duration_seconds');
  if (metric === undefined) return 0;
  const { values } = await metric.get();
  const count = values.find(
    (value) =>
      (value as { metricName?: string }).metricName === 'workqueue_work_duration_seconds_count' &&
      value.labels.name === queue,
  );
  return count?.value ?? 0;
}
