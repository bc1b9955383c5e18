/**
 * Taking data back for a claim: it asks by an annotation naming the PV of an archived or retained
 * volume, and the provisioner moves that data into the claim's new directory. The old PV is gone by
 * then (its delete archived or released the directory), so the data is found by the ownership record
 * that names the PV.
 */
import { InfeasibleError, type OperationContext } from '@kube-provisioner/controller';
import type { EventRecorder } from '@kube-provisioner/controller/events';
import type { RelativeVolumePath, TakeBackOptions, VolumeRoot } from '@kube-provisioner/safe-fs';
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';

/** Claim annotation naming the PV whose archived or retained data the new volume takes back. */
export const annTakeBackFrom = 'nfs.kube-provisioner.io/take-back-from';

// A PV name is a DNS subdomain.
const pvNamePattern = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/u;

/**
 * The PV named by the claim's {@link annTakeBackFrom}, or `undefined` when the claim asks for an
 * empty volume.
 *
 * @throws InfeasibleError when the value is not a PV name, or names the claim's own new PV.
 */
export function takeBackSource(pvc: Readonly<V1PersistentVolumeClaim>, pvName: string): string | undefined {
  const value = pvc.metadata?.annotations?.[annTakeBackFrom];
  if (value === undefined) return undefined;
  if (!pvNamePattern.test(value) || value === pvName) {
    throw new InfeasibleError(
      `annotation ${annTakeBackFrom} must name the PersistentVolume whose archived or retained data this claim takes back, not ${JSON.stringify(value)}`,
    );
  }
  return value;
}

/** Event reason when a claim takes back the data of an archived or retained volume. */
export const reasonTakenBack = 'VolumeTakenBack';

/**
 * Event reason (`Warning`) when a claim's take-back cannot complete (its new path is refused) and the
 * data it had reserved is given back, archive expiry included.
 */
export const reasonTakeBackReleased = 'TakeBackReleased';

/** What {@link takeBack} needs besides the root: the new volume's owner and modes, and the source. */
export interface TakeBackRequest
  extends Pick<TakeBackOptions, 'owner' | 'fromPvName' | 'fromNamespaces' | 'mode' | 'parentMode'> {
  readonly pvc: Readonly<V1PersistentVolumeClaim>;
}

/**
 * Makes `relative` the claim's volume with the data of the archived or retained volume of PV
 * `request.fromPvName`: renamed into place inside the export, never copied, every write fenced.
 * Refused when the data belongs to another namespace than the claim's (unless the class's
 * `takeBackFromNamespaces` names it), is still in use, or another claim took it.
 */
export async function takeBack(
  root: VolumeRoot,
  relative: RelativeVolumePath,
  request: TakeBackRequest,
  context: OperationContext,
  events: Pick<EventRecorder, 'event'> | undefined,
): Promise<void> {
  const { pvc, ...options } = request;
  context.signal.throwIfAborted();
  const claim = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', ...pvc };
  const { outcome, from } = await root.takeBackVolume(relative, {
    ...options,
    beforeEachWrite: () => context.assertLeader(),
    onReleased: (message) => events?.event(claim, 'Warning', reasonTakeBackReleased, message),
  });
  context.assertLeader();
  const { fromPvName } = request;
  context.logger.info({ path: relative, outcome, from, fromPvName }, 'volume directory ready');
  if (outcome !== 'taken-back') return;
  const message = `took back the data of PersistentVolume ${fromPvName} into ${relative}`;
  events?.event(claim, 'Normal', reasonTakenBack, message);
}
