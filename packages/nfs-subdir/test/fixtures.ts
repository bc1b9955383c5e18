/** Builders shared by the NFS provisioner unit tests: claims, classes, PVs, contexts and temporary roots. */
import { mkdtemp, readdir, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ApiError,
  isInfeasibleError,
  type OperationContext,
  type ProvisionOptions,
  type ProvisionResult,
  silentLogger,
} from '@kube-provisioner/controller';
import type { V1PersistentVolume, V1PersistentVolumeClaim, V1StorageClass } from '@kubernetes/client-node';
import { expect } from 'vitest';
import type { NfsDialect } from '../src/class-parameters.ts';
import {
  NfsProvisioner,
  type NfsProvisionerOptions,
  type StorageClassReader,
} from '../src/nfs-provisioner.ts';

export const context: OperationContext = { signal: new AbortController().signal, logger: silentLogger };

export const server = 'nfs.example.com';
export const provisionerName = 'k8s-sigs.io/nfs-subdir-external-provisioner';

export interface ClaimInit {
  namespace?: string;
  name?: string;
  uid?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

let claimCounter = 0;

/** A pending claim asking for 1Gi ReadWriteMany. */
export function claim(init: ClaimInit = {}): V1PersistentVolumeClaim {
  claimCounter += 1;
  return {
    metadata: {
      namespace: init.namespace ?? 'team-a',
      name: init.name ?? `data-${claimCounter}`,
      uid: init.uid ?? `00000000-0000-4000-8000-${String(claimCounter).padStart(12, '0')}`,
      ...(init.labels === undefined ? {} : { labels: init.labels }),
      ...(init.annotations === undefined ? {} : { annotations: init.annotations }),
    },
    spec: { accessModes: ['ReadWriteMany'], resources: { requests: { storage: '1Gi' } } },
  };
}

/** A StorageClass named `nfs-client` (the upstream charts' default name). */
export function storageClass(
  parameters?: Record<string, string>,
  extra: Partial<V1StorageClass> = {},
): V1StorageClass {
  return {
    metadata: { name: 'nfs-client', uid: 'class-uid' },
    provisioner: provisionerName,
    reclaimPolicy: 'Delete',
    ...(parameters === undefined ? {} : { parameters }),
    ...extra,
  };
}

/** Provision options for `pvc` (PV name `pvc-<uid>`). */
export function provisionOptions(
  pvc: V1PersistentVolumeClaim,
  sc: V1StorageClass = storageClass(),
): ProvisionOptions {
  return { pvc, storageClass: sc, pvName: `pvc-${pvc.metadata?.uid}`, selectedNodeName: '' };
}

/** The PV of a successful result; fails the test otherwise. */
export function provisioned(result: ProvisionResult): V1PersistentVolume {
  if ('error' in result) throw result.error;
  return result.pv;
}

/** The error of a failed result, checked to be infeasible or not. */
export function failed(result: ProvisionResult, infeasible: boolean): Error {
  if (!('error' in result)) throw new Error(`expected a failure, got PV ${result.pv.metadata?.name}`);
  expect(result.state).toBe('Finished');
  expect(isInfeasibleError(result.error), result.error.message).toBe(infeasible);
  return result.error;
}

/** The PV as the API server holds it once saved by the controller and released by its claim. */
export function released(pv: V1PersistentVolume, sc: V1StorageClass = storageClass()): V1PersistentVolume {
  return {
    ...pv,
    metadata: {
      ...pv.metadata,
      annotations: { ...pv.metadata?.annotations, 'pv.kubernetes.io/provisioned-by': provisionerName },
    },
    spec: { ...pv.spec, storageClassName: sc.metadata?.name ?? '' },
    status: { phase: 'Released' },
  };
}

/** StorageClasses known to a fake API by name; unknown names answer 404 like the API server. */
export function classReader(...classes: V1StorageClass[]): StorageClassReader & { gets: number } {
  const reader = {
    gets: 0,
    async get(name: string): Promise<V1StorageClass> {
      reader.gets += 1;
      const found = classes.find((sc) => sc.metadata?.name === name);
      if (found === undefined) {
        throw new ApiError(404, `storageclasses.storage.k8s.io "${name}" not found`, { reason: 'NotFound' });
      }
      return found;
    },
  };
  return reader;
}

/** A provisioner for `dialect` on `mountRoot` exporting `/export` from {@link server}. */
export function nfsProvisioner(
  dialect: NfsDialect,
  mountRoot: string,
  extra: Partial<NfsProvisionerOptions> = {},
): NfsProvisioner {
  return new NfsProvisioner({
    dialect,
    server,
    exportPath: '/export',
    mountRoot,
    provisionerName,
    classes: classReader(),
    ...extra,
  });
}

/** A fresh directory (symlinks resolved) removed by the returned disposer. */
export async function temporaryRoot(): Promise<{ path: string; [Symbol.asyncDispose]: () => Promise<void> }> {
  const path = await realpath(await mkdtemp(join(tmpdir(), 'nfs-test-')));
  return { path, [Symbol.asyncDispose]: () => rm(path, { recursive: true, force: true }) };
}

/** Every entry below `dir`, relative, sorted: a snapshot to compare before and after an operation. */
export async function tree(dir: string): Promise<string[]> {
  return (await readdir(dir, { recursive: true })).sort();
}
