/** How informer notifications feed the claim and volume queues. */
import type { V1PersistentVolume, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import type { SharedInformer } from '../informer/shared-informer.ts';
import { unwrapTombstone } from '../informer/tombstone.ts';
import type { RateLimitingQueue } from '../workqueue/rate-limiting-queue.ts';
import type { VolumeSync } from './volume-sync.ts';

/** The informers and queues to connect. */
export interface QueueHandlersConfig {
  readonly claims: SharedInformer<V1PersistentVolumeClaim>;
  readonly volumes: SharedInformer<V1PersistentVolume>;
  readonly claimQueue: RateLimitingQueue;
  readonly volumeQueue: RateLimitingQueue;
  readonly volumeSync: VolumeSync;
  readonly resyncPeriodMs: number;
}

/** Claims are queued by UID, volumes by name; a deleted volume is forgotten. */
export function registerQueueHandlers(config: QueueHandlersConfig): void {
  const { claimQueue, volumeQueue, resyncPeriodMs: period } = config;
  const enqueueClaim = (claim: V1PersistentVolumeClaim): void => {
    const uid = claim.metadata?.uid;
    if (uid) claimQueue.add(uid);
  };
  // Deleted claims are not forgotten: one still in progress is finished through the in-progress map.
  config.claims.addEventHandler(
    { onAdd: enqueueClaim, onUpdate: (_old, claim) => enqueueClaim(claim) },
    period,
  );
  const enqueueVolume = (volume: V1PersistentVolume): void => {
    const name = volume.metadata?.name;
    if (name) volumeQueue.add(name);
  };
  config.volumes.addEventHandler(
    {
      onAdd: enqueueVolume,
      onUpdate: (_old, volume) => enqueueVolume(volume),
      // Only forget: calling `done` here is what once drove the queue depth negative (sig-storage-lib#190).
      onDelete: (deleted) => {
        const { name, uid } = unwrapTombstone(deleted).metadata ?? {};
        if (name) volumeQueue.forget(name);
        if (uid) config.volumeSync.forget(uid);
      },
    },
    period,
  );
}
