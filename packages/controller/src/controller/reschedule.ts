/** Removing the scheduler's selected node from a claim, so that it picks another node (§9.6, §17 row 4). */
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import type { ResourceClient } from '../client/resource-client.ts';
import type { Clock } from '../util/clock.ts';
import { annSelectedNode } from '../wire-names.ts';
import { claimKey } from './claim-fields.ts';
import { withDeadline } from './deadline.ts';
import type { RescheduleMode } from './options.ts';

/** What {@link rescheduleClaim} needs. */
export interface RescheduleConfig {
  readonly claims: ResourceClient<V1PersistentVolumeClaim>;
  readonly mode: RescheduleMode;
  readonly clock: Clock;
  readonly apiRequestTimeoutMs: number;
}

/** Removes the GA selected-node annotation from `claim` on the API server, by patch or by update. */
export async function rescheduleClaim(
  config: RescheduleConfig,
  claim: Readonly<V1PersistentVolumeClaim>,
  parent: AbortSignal,
): Promise<void> {
  const { claims } = config;
  const name = claim.metadata?.name ?? '';
  const namespace = claim.metadata?.namespace ?? '';
  try {
    await withDeadline(config.clock, config.apiRequestTimeoutMs, parent, async (signal) => {
      if (config.mode === 'update') {
        const annotations = { ...claim.metadata?.annotations };
        delete annotations[annSelectedNode];
        const updated = { ...claim, metadata: { ...claim.metadata, annotations } };
        await claims.update(updated, { namespace, signal });
      } else {
        await claims.patch(name, { metadata: { annotations: { [annSelectedNode]: null } } }, 'merge', {
          namespace,
          signal,
        });
      }
    });
  } catch (err) {
    throw new Error(
      `delete annotation 'annSelectedNode' for PersistentVolumeClaim "${claimKey(claim)}": ${String(err)}`,
      { cause: err },
    );
  }
}
