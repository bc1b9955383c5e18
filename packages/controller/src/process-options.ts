/**
 * The process-level option groups of `ProvisionControllerOptions`, apart from the per-controller
 * ones as in controller-runtime's `manager.Options`: the Lease election and the built-in metrics and
 * probe server.
 */

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
