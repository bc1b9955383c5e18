/**
 * The claim, PV and StorageClass informers of a controller: the caller's own where the options give
 * them, else new ones that the controller owns (and therefore starts and stops).
 */
import type { V1PersistentVolume, V1PersistentVolumeClaim, V1StorageClass } from '@kubernetes/client-node';
import {
  type KubeObject,
  type ResourceClient,
  type ResourceDescriptor,
  resources,
} from '../client/resource-client.ts';
import { SharedInformer } from '../informer/shared-informer.ts';
import { indexByUid, uidIndex } from '../informer/store.ts';
import { withoutManagedFields } from '../informer/without-managed-fields.ts';
import type { Clock } from '../util/clock.ts';
import type { Logger } from '../util/logger.ts';
import type { ResolvedOptions } from './resolve-options.ts';

/** The three informers, and those of them the controller created. */
export interface ControllerInformers {
  readonly claims: SharedInformer<V1PersistentVolumeClaim>;
  readonly volumes: SharedInformer<V1PersistentVolume>;
  readonly classes: SharedInformer<V1StorageClass>;
  /** Informers created here, which the controller starts and stops. */
  readonly owned: readonly { run(signal: AbortSignal): Promise<void> }[];
}

/** The informers of a controller with `resolved` options. */
export function controllerInformers(
  resolved: ResolvedOptions,
  clock: Clock,
  logger: Logger,
): ControllerInformers {
  const owned: { run(signal: AbortSignal): Promise<void> }[] = [];
  const informerOptions = { resyncPeriod: resolved.resyncPeriodMs, clock, logger };
  // Nothing here reads managedFields; on 10k cached claims and PVs they would be most of the memory.
  const cached = <T extends KubeObject>(descriptor: ResourceDescriptor<T>): ResourceClient<T> =>
    withoutManagedFields(resolved.api.resource(descriptor));
  const own = <T extends { run(signal: AbortSignal): Promise<void> }>(informer: T): T => {
    owned.push(informer);
    return informer;
  };
  const claims =
    resolved.claimsInformer ??
    own(
      new SharedInformer(cached(resources.persistentVolumeClaims), {
        ...informerOptions,
        indexers: { [uidIndex]: indexByUid },
        ...(resolved.claimLabelSelector === undefined ? {} : { labelSelector: resolved.claimLabelSelector }),
        ...(resolved.claimFieldSelector === undefined ? {} : { fieldSelector: resolved.claimFieldSelector }),
      }),
    );
  const volumes =
    resolved.volumesInformer ?? own(new SharedInformer(cached(resources.persistentVolumes), informerOptions));
  const classes =
    resolved.classesInformer ?? own(new SharedInformer(cached(resources.storageClasses), informerOptions));
  return { claims, volumes, classes, owned };
}
