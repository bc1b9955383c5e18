/** Builders shared by the NFS provisioner unit tests: claims, classes, PVs, contexts and temporary roots. */
import { mkdtemp, readdir, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { OperationContext, ProvisionOptions } from '@kube-provisioner/controller';
import { ApiError } from '@kube-provisioner/controller/client';
import {
  type ClaimFixtureInit,
  claimFixture,
  operationContext,
  provisionOptionsFor,
  releasedVolumeFixture,
  storageClassFixture,
} from '@kube-provisioner/controller/testing';
import type { V1PersistentVolume, V1PersistentVolumeClaim, V1StorageClass } from '@kubernetes/client-node';
import type { NfsDialect } from '../src/class-parameters.ts';
import { NfsProvisioner, type NfsProvisionerOptions } from '../src/nfs-provisioner.ts';
import type { OwnerLookup } from '../src/stale-record.ts';
import type { StorageClassReader } from '../src/volume-delete-policy.ts';
import type { VolumeEventSink } from '../src/volume-events.ts';

export {
  finishedFailure as failed,
  provisionedVolume as provisioned,
} from '@kube-provisioner/controller/testing';

export const context: OperationContext = operationContext();

export const server = 'nfs.example.com';
export const provisionerName = 'k8s-sigs.io/nfs-subdir-external-provisioner';

/** A pending claim asking for 1Gi ReadWriteMany. */
export function claim(
  init: Omit<ClaimFixtureInit, 'accessModes' | 'selectedNode'> = {},
): V1PersistentVolumeClaim {
  return claimFixture({ ...init, accessModes: ['ReadWriteMany'] });
}

/** A StorageClass named `nfs-client` (the upstream charts' default name). */
export function storageClass(
  parameters?: Record<string, string>,
  extra: Partial<V1StorageClass> = {},
): V1StorageClass {
  return storageClassFixture({
    reclaimPolicy: 'Delete',
    ...extra,
    name: 'nfs-client',
    provisioner: provisionerName,
    parameters,
  });
}

/** Provision options for `pvc` (PV name `pvc-<uid>`). */
export function provisionOptions(
  pvc: V1PersistentVolumeClaim,
  sc: V1StorageClass = storageClass(),
): ProvisionOptions {
  return provisionOptionsFor(pvc, sc);
}

/** The PV as the API server holds it once saved by the controller and released by its claim. */
export function released(pv: V1PersistentVolume, sc: V1StorageClass = storageClass()): V1PersistentVolume {
  return releasedVolumeFixture(pv, {
    provisioner: provisionerName,
    storageClassName: sc.metadata?.name ?? '',
  });
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

/** Claims and PVs known to a fake API; anything else answers 404 like the API server. */
export function ownerLookup(
  claims: readonly V1PersistentVolumeClaim[] = [],
  volumes: readonly V1PersistentVolume[] = [],
): OwnerLookup {
  const notFound = (what: string): ApiError => new ApiError(404, `${what} not found`, { reason: 'NotFound' });
  return {
    claims: {
      async get(name, options) {
        const found = claims.find(
          (c) => c.metadata?.name === name && c.metadata.namespace === options?.namespace,
        );
        if (found === undefined) throw notFound(`persistentvolumeclaims "${name}"`);
        return found;
      },
    },
    volumes: {
      async get(name) {
        const found = volumes.find((v) => v.metadata?.name === name);
        if (found === undefined) throw notFound(`persistentvolumes "${name}"`);
        return found;
      },
      async list() {
        return { items: [...volumes], metadata: { resourceVersion: '1' } };
      },
    },
  };
}

/** An event sink remembering what was recorded, by object name. */
export function eventSink(): VolumeEventSink & {
  recorded: Array<{ name: string | undefined; type: string; reason: string; message: string }>;
} {
  const recorded: Array<{ name: string | undefined; type: string; reason: string; message: string }> = [];
  return {
    recorded,
    event(object, type, reason, message) {
      recorded.push({ name: object.metadata?.name, type, reason, message });
    },
  };
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
