/**
 * A {@link ProvisionController} on a {@link FakeKubeApi}, without leader election and with a silent
 * logger: what a provisioner's own controller-level tests need, and what this package's tests use.
 */
import type {
  V1PersistentVolume,
  V1PersistentVolumeClaim,
  V1StorageClass,
  V1VolumeAttributesClass,
} from '@kubernetes/client-node';
import type { Registry } from 'prom-client';
import { resources } from '../client/resource-client.ts';
import { ProvisionController } from '../provision-controller.ts';
import type { ProvisionControllerOptions } from '../provision-controller-options.ts';
import type { OperationContext, Provisioner, ProvisionOptions, ProvisionResult } from '../provisioner.ts';
import { silentLogger } from '../util/logger.ts';
import { FakeKubeApi } from './fake-api.ts';
import { ManualClock } from './manual-clock.ts';
import { fixtureProvisionerName, volumeFor } from './provision-fixtures.ts';

/** A provisioner that records its calls; what each call does is replaceable. */
export class RecordingProvisioner implements Provisioner {
  /** Options of every `provision` call, in order. */
  readonly provisionCalls: ProvisionOptions[] = [];
  /** PVs of every `delete` call, in order. */
  readonly deleteCalls: V1PersistentVolume[] = [];
  /** The result of a `provision` call. Default: the PV of {@link volumeFor}. */
  provisionResult: (options: ProvisionOptions) => ProvisionResult | Promise<ProvisionResult> = (options) => ({
    pv: volumeFor(options),
  });
  /** What a `delete` call does. Default: nothing. */
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

/**
 * An object to seed: a StorageClass, PersistentVolumeClaim, PersistentVolume or
 * VolumeAttributesClass with its `kind`.
 */
export type SeedObject =
  | V1StorageClass
  | V1PersistentVolumeClaim
  | V1PersistentVolume
  | V1VolumeAttributesClass;

/**
 * Options of a {@link Harness}: any controller option (`provisionerName` defaults to
 * `example.com/fixture`, the provisioner to a {@link RecordingProvisioner}), the objects to seed and
 * the fake API to use.
 */
export type HarnessOptions<P extends Provisioner = RecordingProvisioner> = Partial<
  Omit<ProvisionControllerOptions, 'provisioner' | 'api'>
> & {
  readonly provisioner?: P;
  readonly objects?: readonly SeedObject[];
  readonly api?: FakeKubeApi;
};

/** A controller on a fake API, run without leader election from {@link Harness.start} until {@link Harness.stop}. */
export class Harness<P extends Provisioner = RecordingProvisioner> {
  readonly api: FakeKubeApi;
  readonly controller: ProvisionController;
  readonly provisioner: P;
  readonly #stop = new AbortController();
  #done: Promise<void> | undefined;

  constructor(options: HarnessOptions<P> = {}) {
    const { objects = [], api = new FakeKubeApi(), provisioner, ...rest } = options;
    this.api = api;
    // Without a provisioner of its own, P is RecordingProvisioner (the type parameter's default).
    this.provisioner = provisioner ?? (new RecordingProvisioner() as Provisioner as P);
    for (const object of objects) seed(this.api, object);
    this.controller = new ProvisionController({
      provisionerName: fixtureProvisionerName,
      leaderElection: false,
      logger: silentLogger,
      ...rest,
      provisioner: this.provisioner,
      api: this.api,
    });
  }

  /** The controller's metrics. */
  get registry(): Registry {
    return this.controller.registry;
  }

  /** Runs the controller; returns this harness. */
  start(): this {
    this.#done = this.controller.run(this.#stop.signal);
    return this;
  }

  /** Stops the controller gracefully and waits until `run()` has settled. */
  async stop(): Promise<void> {
    this.#stop.abort();
    await this.#done;
  }

  /** PVs in the fake API. */
  volumes(): V1PersistentVolume[] {
    return this.api.objects(resources.persistentVolumes);
  }

  /** Claims in the fake API. */
  claims(): V1PersistentVolumeClaim[] {
    return this.api.objects(resources.persistentVolumeClaims);
  }

  /** Events written so far, as `reason: message`. */
  events(): string[] {
    return this.api.objects(resources.events).map((event) => `${event.reason}: ${event.message}`);
  }
}

/** A harness whose controller and fake API share a {@link ManualClock}, with both. */
export interface ManualHarness<P extends Provisioner = RecordingProvisioner> {
  readonly clock: ManualClock;
  readonly api: FakeKubeApi;
  readonly harness: Harness<P>;
}

/**
 * A harness on a {@link ManualClock} (starting at 2023-11-14): nothing time-driven happens unless the
 * test moves the clock, with `pump` or `eventually(check, { clock })`.
 */
export function manualHarness<P extends Provisioner = RecordingProvisioner>(
  options: HarnessOptions<P> = {},
): ManualHarness<P> {
  const clock = new ManualClock(1_700_000_000_000);
  const api = new FakeKubeApi({ clock });
  return { clock, api, harness: new Harness<P>({ clock, api, ...options }) };
}

function seed(api: FakeKubeApi, object: SeedObject): void {
  const { kind } = object;
  if (kind === 'StorageClass') api.seed(resources.storageClasses, object as V1StorageClass);
  else if (kind === 'PersistentVolumeClaim')
    api.seed(resources.persistentVolumeClaims, object as V1PersistentVolumeClaim);
  else if (kind === 'PersistentVolume') api.seed(resources.persistentVolumes, object as V1PersistentVolume);
  else if (kind === 'VolumeAttributesClass')
    api.seed(resources.volumeAttributesClasses, object as V1VolumeAttributesClass);
  else throw new Error(`cannot seed an object of kind ${JSON.stringify(kind)}: set kind on it`);
}
