/** PVs, ownership records and volume roots shaped as the provisioners make them, for unit tests. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { annDynamicallyProvisioned, finalizerPV } from '@kube-provisioner/controller/wire-names';
import { parseRelativeVolumePath, VolumeRoot } from '@kube-provisioner/safe-fs';
import type { V1PersistentVolume } from '@kubernetes/client-node';
import { onTestFinished } from 'vitest';

export const provisionerName = 'example.com/nfs';
export const exportPath = '/export/k8s';

/** Fields of {@link nfsVolume}. */
export interface VolumeInit {
  readonly name: string;
  /** Relative to the export; the PV's `spec.nfs.path` is `exportPath/<path>`. */
  readonly path: string;
  readonly claimUid?: string;
  readonly phase?: string;
  readonly reclaimPolicy?: string;
  readonly deletionTimestamp?: Date;
  readonly lastPhaseTransitionTime?: Date;
  readonly provisioner?: string;
}

/** A PV of {@link provisionerName} on server `nfs.example.com`. */
export function nfsVolume(init: VolumeInit): V1PersistentVolume {
  return {
    metadata: {
      name: init.name,
      annotations: { [annDynamicallyProvisioned]: init.provisioner ?? provisionerName },
      finalizers: [finalizerPV],
      ...(init.deletionTimestamp === undefined ? {} : { deletionTimestamp: init.deletionTimestamp }),
    },
    spec: {
      nfs: { server: 'nfs.example.com', path: `${exportPath}/${init.path}` },
      persistentVolumeReclaimPolicy: init.reclaimPolicy ?? 'Delete',
      claimRef: {
        namespace: 'team-a',
        name: `claim-of-${init.name}`,
        uid: init.claimUid ?? `uid-${init.name}`,
      },
    },
    status: {
      phase: init.phase ?? 'Bound',
      ...(init.lastPhaseTransitionTime === undefined
        ? {}
        : { lastPhaseTransitionTime: init.lastPhaseTransitionTime }),
    },
  };
}

/** A fresh temporary volume root, removed when the calling test finishes, passed or failed. */
export async function volumeRootDir(): Promise<{ dir: string; root: VolumeRoot }> {
  const dir = await mkdtemp(join(tmpdir(), 'audit-'));
  // Called from a test body, where an `afterEach` registered now would never run.
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return { dir, root: new VolumeRoot(dir) };
}

/** Creates volume `path` for PV `pvName` with a real ownership record, as a provisioner does. */
export async function provisionDirectory(root: VolumeRoot, path: string, pvName: string): Promise<void> {
  await root.createVolume(parseRelativeVolumePath(path), {
    owner: {
      claimUid: `uid-${pvName}`,
      namespace: 'team-a',
      claimName: `claim-of-${pvName}`,
      pvName,
      provisioner: provisionerName,
    },
    mode: 0o777,
  });
}
