/**
 * The source of a clone (`dataSource` of kind PersistentVolumeClaim): a claim of the same namespace,
 * Bound to a PV this provisioner made, no larger than the new claim's request, and protected from
 * deletion while it is copied by external-provisioner's cloning-protection finalizer.
 */

import type { V1PersistentVolume, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { isNotFound } from '../client/api-error.ts';
import { storageBytes } from '../client/quantity.ts';
import type { ResourceClient } from '../client/resource-client.ts';
import { InfeasibleError } from '../errors.ts';
import type { ClaimDataSource } from '../provisioner.ts';
import { annDynamicallyProvisioned } from '../wire-names.ts';

/** external-provisioner's finalizer, on a source claim while a clone of it is made. */
export const finalizerCloningProtection = 'provisioner.storage.kubernetes.io/cloning-protection';

/**
 * Reads clone sources and sets their finalizer (`persistentvolumeclaims` `get`, `patch`;
 * `persistentvolumes` `get`); `ResourceClient`s fit.
 */
export interface CloneSourceAccess {
  readonly claims: Pick<ResourceClient<V1PersistentVolumeClaim>, 'get' | 'patch'>;
  readonly volumes: Pick<ResourceClient<V1PersistentVolume>, 'get'>;
}

/** A claim to clone and the PV it is bound to. */
export interface CloneSource {
  readonly pvc: V1PersistentVolumeClaim;
  readonly pv: V1PersistentVolume;
  /** @deprecated The same object as {@link CloneSource.pvc}; goes in the next major. */
  readonly claim: V1PersistentVolumeClaim;
}

/**
 * The Bound source claim of `dataSource` and its PV, checked to be clonable into `pvc`.
 *
 * @throws InfeasibleError for a source of another namespace, of another provisioner, or larger than
 * the request; a plain error (retried) while the source is missing, not Bound yet, or being deleted.
 */
export async function cloneSource(
  access: CloneSourceAccess,
  dataSource: ClaimDataSource,
  pvc: Readonly<V1PersistentVolumeClaim>,
  provisionerName: string,
  signal: AbortSignal,
): Promise<CloneSource> {
  const { namespace, name } = dataSource;
  const what = `source claim ${namespace}/${name}`;
  if (namespace !== pvc.metadata?.namespace) {
    throw new InfeasibleError(`${what}: cloning a claim of another namespace is not supported`);
  }
  const source = await access.claims.get(name, { namespace, signal }).catch((err: unknown) => {
    throw isNotFound(err) ? new Error(`${what} does not exist`, { cause: err }) : err;
  });
  const volumeName = source.spec?.volumeName;
  if (source.status?.phase !== 'Bound' || volumeName === undefined || volumeName === '') {
    throw new Error(`${what} is not Bound yet`);
  }
  if (source.metadata?.deletionTimestamp !== undefined) throw new Error(`${what} is being deleted`);
  const pv = await access.volumes.get(volumeName, { signal });
  if (pv.metadata?.annotations?.[annDynamicallyProvisioned] !== provisionerName) {
    throw new InfeasibleError(
      `${what} is bound to ${volumeName}, which ${provisionerName} did not provision`,
    );
  }
  const [sourceBytes, requestBytes] = [
    storageBytes(pv.spec?.capacity?.storage),
    storageBytes(pvc.spec?.resources?.requests?.storage),
  ];
  if (sourceBytes === undefined || requestBytes === undefined || sourceBytes > requestBytes) {
    throw new InfeasibleError(
      `${what} (${pv.spec?.capacity?.storage}) is larger than the request (${pvc.spec?.resources?.requests?.storage})`,
    );
  }
  return { pvc: source, pv, claim: source };
}

/** Adds the cloning-protection finalizer to the source claim (a strategic merge adds to the list). */
export async function protectSource(
  access: CloneSourceAccess,
  pvc: V1PersistentVolumeClaim,
  signal: AbortSignal,
): Promise<void> {
  if (pvc.metadata?.finalizers?.includes(finalizerCloningProtection) === true) return;
  const patch = { metadata: { finalizers: [finalizerCloningProtection] } };
  await access.claims.patch(pvc.metadata?.name ?? '', patch, 'strategic', {
    namespace: pvc.metadata?.namespace ?? '',
    signal,
  });
}

/** Removes the cloning-protection finalizer from the source claim; a claim already gone is fine. */
export async function releaseSource(
  access: CloneSourceAccess,
  source: { readonly namespace: string; readonly name: string },
  signal: AbortSignal,
): Promise<void> {
  const patch = { metadata: { '$deleteFromPrimitiveList/finalizers': [finalizerCloningProtection] } };
  await access.claims
    .patch(source.name, patch, 'strategic', { namespace: source.namespace, signal })
    .catch((err: unknown) => {
      if (!isNotFound(err)) throw err;
    });
}
