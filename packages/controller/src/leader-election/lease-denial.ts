/**
 * A Lease the candidate is not allowed to use (HTTP 403) is a configuration error, not an outage: a
 * replica without Lease permissions never leads and provisions nothing. It is reported loudly (error
 * level, once per minute, with the verb, the resource and the RBAC rule that grants it) and fails
 * readiness until an attempt succeeds. The controller never falls back to running without the Lease.
 */
import { isForbidden } from '../client/api-error.ts';
import type { Clock } from '../util/clock.ts';
import type { Logger } from '../util/logger.ts';

/** Verbs the elector uses on its Lease. */
export type LeaseVerb = 'get' | 'create' | 'update' | 'watch';

/** How often the same denial is logged again. */
const reportEveryMs = 60_000;

/** The RBAC rule every candidate needs, as it appears in a Role manifest. */
export const leaseRule =
  '{ apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["get", "create", "update"] }';

/** Tracks and reports 403s on one Lease. */
export class LeaseDenials {
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #namespace: string;
  readonly #name: string;
  #denied: { verb: LeaseVerb; message: string } | undefined;
  #lastReport = Number.NEGATIVE_INFINITY;

  constructor(clock: Clock, logger: Logger, namespace: string, name: string) {
    this.#clock = clock;
    this.#logger = logger;
    this.#namespace = namespace;
    this.#name = name;
  }

  /** Records a failed call; true when it was a 403 (reported here), false for the caller to log. */
  failed(verb: LeaseVerb, err: unknown): boolean {
    if (!isForbidden(err)) return false;
    const message =
      `forbidden to ${verb} leases.coordination.k8s.io "${this.#name}" in namespace "${this.#namespace}": ` +
      `grant the provisioner's ServiceAccount a Role in that namespace with the rule ${leaseRule}`;
    const changed = this.#denied?.verb !== verb;
    this.#denied = { verb, message };
    const now = this.#clock.now();
    if (changed || now - this.#lastReport >= reportEveryMs) {
      this.#lastReport = now;
      this.#logger.error({ err, verb, resource: 'leases', group: 'coordination.k8s.io' }, message);
    }
    return true;
  }

  /** An attempt reached the Lease: any denial is over. */
  succeeded(): void {
    this.#denied = undefined;
  }

  /** The current denial as an error for a readiness probe, or `null`. */
  check(): Error | null {
    return this.#denied === undefined ? null : new Error(this.#denied.message);
  }
}
