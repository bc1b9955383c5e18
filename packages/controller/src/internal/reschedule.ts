/** Removing the scheduler's selected node from a claim, so that it picks another node. */
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { isConflict } from '../client/api-error.ts';
import type { ResourceClient } from '../client/resource-client.ts';
import type { RescheduleMode } from '../provision-controller-options.ts';
import { type Clock, sleep } from '../util/clock.ts';
import { annSelectedNode } from '../wire-names.ts';
import { claimKey } from './claim-fields.ts';
import { withDeadline } from './deadline.ts';

/** What {@link rescheduleClaim} needs. */
export interface RescheduleConfig {
  readonly claims: ResourceClient<V1PersistentVolumeClaim>;
  readonly mode: RescheduleMode;
  readonly clock: Clock;
  readonly apiRequestTimeoutMs: number;
}

/**
 * Attempts of the `update` mode, and the pause between them: client-go's `retry.DefaultBackoff`
 * (5 steps of 10 ms; its 10 % jitter is left out), as Go's `RetryOnConflict` uses it.
 */
const updateAttempts = 5;
const updateRetryMs = 10;

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
        await updateWithoutSelectedNode(config, name, namespace, signal);
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

/**
 * Go's reschedule since v13.1.0: read the claim afresh, stop if the annotation is gone already, else
 * PUT it without the annotation; a conflict (someone else changed the claim meanwhile) starts over.
 */
async function updateWithoutSelectedNode(
  config: RescheduleConfig,
  name: string,
  namespace: string,
  signal: AbortSignal,
): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const fresh = await config.claims.get(name, { namespace, signal });
    const annotations = fresh.metadata?.annotations;
    if (annotations === undefined || !Object.hasOwn(annotations, annSelectedNode)) return;
    const { [annSelectedNode]: _removed, ...kept } = annotations;
    try {
      await config.claims.update(
        { ...fresh, metadata: { ...fresh.metadata, annotations: kept } },
        { namespace, signal },
      );
      return;
    } catch (err) {
      if (!isConflict(err) || attempt >= updateAttempts) throw err;
    }
    await sleep(config.clock, updateRetryMs, signal);
  }
}
