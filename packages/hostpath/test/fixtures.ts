/** Builders shared by the hostpath unit tests: claims, classes, contexts and temporary roots. */
import { mkdtemp, realpath, rm } from 'node:fs/promises';
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
import type {
  V1Node,
  V1PersistentVolume,
  V1PersistentVolumeClaim,
  V1StorageClass,
} from '@kubernetes/client-node';
import { defaultProvisionerName } from '../src/hostpath-provisioner.ts';
import type { NodeReader } from '../src/node-placement.ts';

export {
  finishedFailure as failed,
  provisionedVolume as provisioned,
} from '@kube-provisioner/controller/testing';

export const context: OperationContext = operationContext();

/** A pending claim asking for 1Gi (ReadWriteOnce unless said otherwise); `node` sets the selected node. */
export function claim(
  init: Omit<ClaimFixtureInit, 'selectedNode'> & { node?: string | undefined } = {},
): V1PersistentVolumeClaim {
  const { node, ...rest } = init;
  return claimFixture({ ...rest, selectedNode: node });
}

/** A StorageClass of our provisioner. */
export function storageClass(
  parameters?: Record<string, string>,
  extra: Partial<V1StorageClass> = {},
): V1StorageClass {
  return storageClassFixture({ ...extra, name: 'hostpath', provisioner: defaultProvisionerName, parameters });
}

/** Provision options for `pvc` (PV name `pvc-<uid>`, selected node from the claim). */
export function provisionOptions(
  pvc: V1PersistentVolumeClaim,
  sc: V1StorageClass = storageClass(),
): ProvisionOptions {
  return provisionOptionsFor(pvc, sc);
}

/** The PV as the API server would hold it once bound and then released by its claim. */
export function released(pv: V1PersistentVolume, pvc: V1PersistentVolumeClaim): V1PersistentVolume {
  return releasedVolumeFixture(pv, { provisioner: defaultProvisionerName, claim: pvc });
}

/** Nodes known to a fake API: name → labels. Unknown names answer 404 like the API server. */
export function nodeReader(nodes: Record<string, Record<string, string>>): NodeReader {
  return {
    async get(name: string): Promise<V1Node> {
      const labels = nodes[name];
      if (labels === undefined) {
        throw new ApiError(404, `nodes "${name}" not found`, { reason: 'NotFound' });
      }
      return { metadata: { name, labels } };
    },
  };
}

/** A fresh directory (symlinks resolved) removed by the returned disposer. */
export async function temporaryRoot(): Promise<{ path: string; [Symbol.asyncDispose]: () => Promise<void> }> {
  const path = await realpath(await mkdtemp(join(tmpdir(), 'hostpath-test-')));
  return { path, [Symbol.asyncDispose]: () => rm(path, { recursive: true, force: true }) };
}
