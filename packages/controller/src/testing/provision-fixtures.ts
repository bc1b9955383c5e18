/**
 * Builders for unit tests of a `Provisioner`: claims, classes and provision options shaped as
 * the controller hands them over, a silent operation context, and readers of the result.
 */
import type { V1PersistentVolume, V1PersistentVolumeClaim, V1StorageClass } from '@kubernetes/client-node';
import { isInfeasibleError } from '../errors.ts';
import type { OperationContext, ProvisionOptions, ProvisionResult } from '../provisioner.ts';
import { silentLogger } from '../util/logger.ts';
import { annDynamicallyProvisioned, annSelectedNode, annStorageProvisioner } from '../wire-names.ts';

/** Provisioner name the fixtures and the test `Harness` default to. */
export const fixtureProvisionerName = 'example.com/fixture';

/** StorageClass name the fixtures default to. */
export const fixtureClassName = 'fixture';

/** Fields of {@link claimFixture}; each has a default. */
export interface ClaimFixtureInit {
  /** Default `team-a`. */
  readonly namespace?: string | undefined;
  /** Default `data-<n>`, unique within the test file. */
  readonly name?: string | undefined;
  /** Default a UUID ending in `<n>`. */
  readonly uid?: string | undefined;
  /** Default `['ReadWriteOnce']`. */
  readonly accessModes?: readonly string[] | undefined;
  /** Requested size. Default `1Gi`. */
  readonly storage?: string | undefined;
  /** `spec.storageClassName`. Default `fixture`, the name of {@link storageClassFixture}'s class. */
  readonly storageClassName?: string | undefined;
  /**
   * Written to the `volume.kubernetes.io/storage-provisioner` annotation, as the PV controller does for
   * a class it does not provision itself. Default `example.com/fixture`, the harness's provisioner.
   */
  readonly provisioner?: string | undefined;
  /** The scheduler's choice, written to the selected-node annotation. */
  readonly selectedNode?: string | undefined;
  readonly labels?: Readonly<Record<string, string>> | undefined;
  readonly annotations?: Readonly<Record<string, string>> | undefined;
}

let claimCounter = 0;

/**
 * A pending claim that a controller for `example.com/fixture` provisions as it is (class and
 * provisioner annotation set); every call without `name` and `uid` gets fresh ones.
 */
export function claimFixture(init: ClaimFixtureInit = {}): V1PersistentVolumeClaim {
  claimCounter += 1;
  const annotations = {
    [annStorageProvisioner]: init.provisioner ?? fixtureProvisionerName,
    ...init.annotations,
    ...(init.selectedNode === undefined ? {} : { [annSelectedNode]: init.selectedNode }),
  };
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      namespace: init.namespace ?? 'team-a',
      name: init.name ?? `data-${claimCounter}`,
      uid: init.uid ?? `00000000-0000-4000-8000-${String(claimCounter).padStart(12, '0')}`,
      ...(init.labels === undefined ? {} : { labels: { ...init.labels } }),
      annotations,
    },
    spec: {
      storageClassName: init.storageClassName ?? fixtureClassName,
      accessModes: [...(init.accessModes ?? ['ReadWriteOnce'])],
      resources: { requests: { storage: init.storage ?? '1Gi' } },
    },
  };
}

/** Fields of {@link storageClassFixture}; each has a default, and any other StorageClass field can be set. */
export interface StorageClassFixtureInit
  extends Partial<Omit<V1StorageClass, 'metadata' | 'provisioner' | 'parameters'>> {
  /** Default `fixture`, the class {@link claimFixture} asks for. */
  readonly name?: string | undefined;
  /** Default `example.com/fixture`, the harness's provisioner. */
  readonly provisioner?: string | undefined;
  /** `parameters`; none by default. */
  readonly parameters?: Readonly<Record<string, string>> | undefined;
}

/** The StorageClass {@link claimFixture}'s claims ask for, of the harness's provisioner by default. */
export function storageClassFixture(init: StorageClassFixtureInit = {}): V1StorageClass {
  const { name, provisioner, parameters, ...extra } = init;
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name: name ?? fixtureClassName, uid: 'class-uid' },
    provisioner: provisioner ?? fixtureProvisionerName,
    ...(parameters === undefined ? {} : { parameters: { ...parameters } }),
    ...extra,
  };
}

/** The options the controller passes for `pvc`: PV name `pvc-<uid>`, selected node from its annotation. */
export function provisionOptionsFor(
  pvc: V1PersistentVolumeClaim,
  storageClass: V1StorageClass,
): ProvisionOptions {
  return {
    pvc,
    storageClass,
    pvName: `pvc-${pvc.metadata?.uid}`,
    selectedNodeName: pvc.metadata?.annotations?.[annSelectedNode] ?? '',
  };
}

/** A context that is never aborted, always leads and logs nothing. */
export function operationContext(): OperationContext {
  return { signal: new AbortController().signal, assertLeader: () => {}, logger: silentLogger };
}

/** The PV of a successful result. @throws the result's error otherwise. */
export function provisionedVolume(result: ProvisionResult): V1PersistentVolume {
  if ('error' in result) throw result.error;
  return result.pv;
}

/**
 * The error of a `Finished` failure that is infeasible (or not) as expected.
 *
 * @throws Error when the result is a PV, has another state, or has the other kind of error.
 */
export function finishedFailure(result: ProvisionResult, infeasible: boolean): Error {
  if (!('error' in result)) throw new Error(`expected a failure, got PV ${result.pv.metadata?.name}`);
  if (result.state !== 'Finished') {
    throw new Error(`expected state Finished, got ${result.state}: ${result.error.message}`);
  }
  if (isInfeasibleError(result.error) !== infeasible) {
    throw new Error(
      `expected ${infeasible ? 'an infeasible' : 'a feasible'} error, got: ${result.error.message}`,
      { cause: result.error },
    );
  }
  return result.error;
}

/** The PV a well-behaved provisioner returns for `options`: a hostPath volume under `/tmp`. */
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

/** What the API server adds to a PV saved by the controller and released by its claim. */
export interface ReleaseFixtureInit {
  /** Written to `pv.kubernetes.io/provisioned-by`. */
  readonly provisioner: string;
  /** The claim that was bound, as `spec.claimRef`. */
  readonly claim?: V1PersistentVolumeClaim | undefined;
  /** `spec.storageClassName`. */
  readonly storageClassName?: string | undefined;
}

/** `pv` as the API server holds it once saved, bound and then released by its claim. */
export function releasedVolumeFixture(pv: V1PersistentVolume, init: ReleaseFixtureInit): V1PersistentVolume {
  const { claim } = init;
  return {
    ...pv,
    metadata: {
      ...pv.metadata,
      annotations: { ...pv.metadata?.annotations, [annDynamicallyProvisioned]: init.provisioner },
    },
    spec: {
      ...pv.spec,
      ...(init.storageClassName === undefined ? {} : { storageClassName: init.storageClassName }),
      ...(claim === undefined
        ? {}
        : {
            claimRef: {
              kind: 'PersistentVolumeClaim',
              namespace: claim.metadata?.namespace ?? '',
              name: claim.metadata?.name ?? '',
              uid: claim.metadata?.uid ?? '',
            },
          }),
    },
    status: { phase: 'Released' },
  };
}
