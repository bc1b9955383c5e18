/**
 * The process-level option groups of {@link ProvisionControllerOptions}, apart from the per-controller
 * ones as in controller-runtime's `manager.Options`: the Lease election and the built-in metrics and
 * probe server. Their flat names of earlier releases still work as deprecated aliases.
 */
import type { ProvisionControllerOptions } from './options.ts';

/** What `run()` does when the Lease is lost: campaign again (default), or reject. */
export type LeaseLossPolicy = 'campaign' | 'reject';

/** `ProvisionControllerOptions.leaderElection` as an object: the Lease and its timings. */
export interface LeaderElectionOptions {
  /** Namespace of the Lease. Default env `POD_NAMESPACE`, else the service account's, else `default`. */
  readonly namespace?: string;
  /** Default 15 s. */
  readonly leaseDurationMs?: number;
  /** Default 10 s. */
  readonly renewDeadlineMs?: number;
  /** Default 2 s. */
  readonly retryPeriodMs?: number;
  /** Give up the Lease on graceful stop. Default true. */
  readonly releaseOnShutdown?: boolean;
  /**
   * What happens when the Lease is lost or its fence lapses (no renewal for `renewDeadlineMs`, e.g.
   * through an API outage or a frozen process). Either way every operation in flight is aborted at
   * once and nothing more is done as leader. `'campaign'` (default): `run()` goes on, campaigns
   * again and leads again only after acquiring the Lease afresh, so an outage never ends the
   * process. `'reject'`: `run()` rejects with a `LeaderElectionLostError`, as Go's library exits.
   */
  readonly onLost?: LeaseLossPolicy;
}

/**
 * `ProvisionControllerOptions.metricsServer`: the built-in server. When `port` is set, `run()` serves
 * the registry on `path` and the probes on `/healthz` and `/readyz` on every replica, leader or not,
 * from its start until it settles; a port that cannot be bound rejects `run()`.
 */
export interface MetricsServerOptions {
  /** 0 = no server. Default 0. */
  readonly port?: number;
  /** Listen address. Default `0.0.0.0`. */
  readonly address?: string;
  /** Default `/metrics`; `/healthz` and `/readyz` are taken by the probes. */
  readonly path?: string;
}

/** The flat names of the process options, each an alias of a field of its group. */
export interface FlatProcessOptions {
  /** @deprecated Use `leaderElection: { namespace }`. */
  readonly leaderElectionNamespace?: string;
  /** @deprecated Use `leaderElection: { leaseDurationMs }`. */
  readonly leaseDurationMs?: number;
  /** @deprecated Use `leaderElection: { renewDeadlineMs }`. */
  readonly renewDeadlineMs?: number;
  /** @deprecated Use `leaderElection: { retryPeriodMs }`. */
  readonly retryPeriodMs?: number;
  /** @deprecated Use `leaderElection: { releaseOnShutdown }`. */
  readonly releaseLeaseOnShutdown?: boolean;
  /** @deprecated Use `leaderElection: { onLost }`. */
  readonly onLeaseLost?: LeaseLossPolicy;
  /** @deprecated Use `metricsServer: { port }`. */
  readonly metricsPort?: number;
  /** @deprecated Use `metricsServer: { address }`. */
  readonly metricsAddress?: string;
  /** @deprecated Use `metricsServer: { path }`. */
  readonly metricsPath?: string;
}

/** Each group field's deprecated flat name. */
export const leaderElectionAliases: {
  readonly [Key in keyof Required<LeaderElectionOptions>]: keyof FlatProcessOptions;
} = {
  namespace: 'leaderElectionNamespace',
  leaseDurationMs: 'leaseDurationMs',
  renewDeadlineMs: 'renewDeadlineMs',
  retryPeriodMs: 'retryPeriodMs',
  releaseOnShutdown: 'releaseLeaseOnShutdown',
  onLost: 'onLeaseLost',
};

/** Each group field's deprecated flat name. */
export const metricsServerAliases: {
  readonly [Key in keyof Required<MetricsServerOptions>]: keyof FlatProcessOptions;
} = {
  port: 'metricsPort',
  address: 'metricsAddress',
  path: 'metricsPath',
};

/**
 * One option group with its flat aliases folded in: `values` holds each field from the group, else
 * from its alias, and `names` the name the caller used, for messages. Both set is a problem.
 */
export function foldAliases(
  options: ProvisionControllerOptions,
  group: string,
  aliases: Readonly<Record<string, keyof FlatProcessOptions>>,
  problems: string[],
): { values: Record<string, unknown>; names: Record<string, string> } {
  const given: unknown = options[group as keyof ProvisionControllerOptions];
  const fields = typeof given === 'object' && given !== null ? (given as Record<string, unknown>) : {};
  const values: Record<string, unknown> = {};
  const names: Record<string, string> = {};
  for (const [key, alias] of Object.entries(aliases)) {
    const inGroup = fields[key];
    const flat = options[alias];
    if (inGroup !== undefined && flat !== undefined) {
      problems.push(`${group}.${key}, ${alias} cannot be used together`);
    }
    values[key] = inGroup ?? flat;
    names[key] = inGroup !== undefined ? `${group}.${key}` : alias;
  }
  return { values, names };
}
