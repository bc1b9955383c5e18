/**
 * Follows a leader-election Lease by polling it (a watch would need re-establishing across the
 * kube-apiserver restart anyway), and keeps every tenure seen: holder and `acquireTime`. A tenure
 * lasts at least the lease duration, far longer than the poll interval, so none is missed.
 */

import type { LeaseTenure } from '@kube-provisioner/controller/testing';
import { CoordinationV1Api, type KubeConfig } from '@kubernetes/client-node';

/** A Lease being followed. */
export interface LeaseTracker {
  /** Every tenure seen so far, in order. */
  tenures(): LeaseTenure[];
  /** The current holder, as last seen; `undefined` when free or not yet read. */
  holder(): string | undefined;
  stop(): void;
}

const pollIntervalMs = 250;

/** Starts polling Lease `name` in `namespace`. */
export function trackLease(kubeConfig: KubeConfig, namespace: string, name: string): LeaseTracker {
  const api = kubeConfig.makeApiClient(CoordinationV1Api);
  const seen: LeaseTenure[] = [];
  let holder: string | undefined;
  let stopped = false;
  const poll = async (): Promise<void> => {
    while (!stopped) {
      try {
        const lease = await api.readNamespacedLease({ namespace, name });
        holder = lease.spec?.holderIdentity || undefined;
        const acquiredAtMs = lease.spec?.acquireTime ? new Date(lease.spec.acquireTime).getTime() : undefined;
        const last = seen.at(-1);
        if (holder !== undefined && acquiredAtMs !== undefined) {
          if (last === undefined || last.holder !== holder || last.acquiredAtMs !== acquiredAtMs) {
            seen.push({ holder, acquiredAtMs });
          }
        }
      } catch {
        // Not created yet, or the API server is restarting: the next poll sees it.
      }
      await new Promise((resolve) => setTimeout(resolve, pollIntervalMs));
    }
  };
  void poll();
  return {
    tenures: () => [...seen],
    holder: () => holder,
    stop() {
      stopped = true;
    },
  };
}
