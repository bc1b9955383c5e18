/** Builders shared by the hostpath unit tests: claims, classes, contexts and temporary roots. */
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ApiError,
  annSelectedNode,
  isInfeasibleError,
  type OperationContext,
  type ProvisionOptions,
  type ProvisionResult,
  silentLogger,
} from '@kube-provisioner/controller';
import type {
  V1Node,
  V1PersistentVolume,
  V1PersistentVolumeClaim,
  V1StorageClass,
} from '@kubernetes/client-node';
import { expect } from 'vitest';
import type { NodeReader } from '../src/hostpath-provisioner.ts';

export const context: OperationContext = { signal: new AbortController().signal, logger: silentLogger };

export interface ClaimInit {
  namespace?: string;
  name?: string;
  uid?: string;
  node?: string;
  accessModes?: string[];
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

let claimCounter = 0;

/** A pending claim; `node` sets the scheduler's selected-node annotation. */
export function claim(init: ClaimInit = {}): V1PersistentVolumeClaim {
  claimCounter += 1;
  const annotations = {
    ...init.annotations,
    ...(init.node === undefined ? {} : { [annSelectedNode]: init.node }),
  };
  return {
    metadata: {
      namespace: init.namespace ?? 'team-a',
      name: init.name ?? `data-${claimCounter}`,
      uid: init.uid ?? `00000000-0000-4000-8000-${String(claimCounter).padStart(12, '0')}`,
      annotations,
      ...(init.labels === undefined ? {} : { labels: init.labels }),
    },
    spec: {
      accessModes: init.accessModes ?? ['ReadWriteOnce'],
      resources: { requests: { storage: '1Gi' } },
    },
  };
}

/** A StorageClass of our provisioner. */
export function storageClass(
  parameters?: Record<string, string>,
  extra: Partial<V1StorageClass> = {},
): V1StorageClass {
  return {
    metadata: { name: 'hostpath', uid: 'class-uid' },
    provisioner: 'kube-provisioner.io/hostpath',
    ...(parameters === undefined ? {} : { parameters }),
    ...extra,
  };
}

/** Provision options for `pvc` (PV name `pvc-<uid>`, selected node from the claim). */
export function provisionOptions(
  pvc: V1PersistentVolumeClaim,
  sc: V1StorageClass = storageClass(),
): ProvisionOptions {
  return {
    pvc,
    storageClass: sc,
    pvName: `pvc-${pvc.metadata?.uid}`,
    selectedNodeName: pvc.metadata?.annotations?.[annSelectedNode] ?? '',
  };
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

/** The PV as the API server would hold it once bound and then released by its claim. */
export function released(pv: V1PersistentVolume, pvc: V1PersistentVolumeClaim): V1PersistentVolume {
  return {
    ...pv,
    metadata: {
      ...pv.metadata,
      annotations: {
        ...pv.metadata?.annotations,
        'pv.kubernetes.io/provisioned-by': 'kube-provisioner.io/hostpath',
      },
    },
    spec: {
      ...pv.spec,
      claimRef: {
        kind: 'PersistentVolumeClaim',
        namespace: pvc.metadata?.namespace ?? '',
        name: pvc.metadata?.name ?? '',
        uid: pvc.metadata?.uid ?? '',
      },
    },
    status: { phase: 'Released' },
  };
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
