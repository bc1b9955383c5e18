/**
 * Where a provisioned PV goes. The claim path hands every new PV to a store; the store
 * decides how hard to retry the API create and what to do when it cannot.
 */
import type { V1PersistentVolume, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import type { Logger } from '../util/logger.ts';

/** Saves provisioned PVs. */
export interface PvStore {
  /**
   * Saves `pv`, provisioned for `claim`. Resolves once the claim counts as provisioned; rejects
   * with the save error when the claim must be provisioned again. Not bound to the claim's
   * `provisionTimeout`: a created asset must not be orphaned by that deadline.
   */
  savePersistentVolume(
    claim: Readonly<V1PersistentVolumeClaim>,
    pv: V1PersistentVolume,
    logger: Logger,
  ): Promise<void>;
}
