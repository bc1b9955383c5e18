/**
 * The JSON document a bench run writes: one object per scenario with numeric fields, and the
 * conditions of the run (machine, load, versions, commit) so figures from different runs can be
 * compared honestly. Field names are snake_case because the document is read by scripts and people,
 * not by this code.
 */
import type { OursBuild } from './ours-program.ts';
import type { LatencySummary } from './percentiles.ts';

/** N claims of an Immediate class created at once and provisioned by the hostpath provisioner. */
export interface BurstResult {
  readonly claims: number;
  /** First claim create sent → last PV seen. */
  readonly seconds_to_all_pv: number;
  /** First claim create sent → last claim seen Bound. */
  readonly seconds_to_all_bound: number;
  /**
   * First claim create sent → last claim seen with the storage-provisioner annotation, which
   * kube-controller-manager's PV controller sets and the provisioner waits for.
   */
  readonly seconds_to_all_annotated: number;
  /** `claims / seconds_to_all_pv`. */
  readonly claims_per_s: number;
  /** Claim ADDED → its PV ADDED, both seen by one watcher. */
  readonly latency_ms: LatencySummary;
  /** Claim seen annotated → its PV ADDED: the provisioner's own share of the latency. */
  readonly annotated_to_pv_ms: LatencySummary;
  /** Provisioner peak RSS over its whole life (VmHWM). */
  readonly peak_rss_mb: number;
  /** Provisioner CPU (user + system) between the first create and the last PV. */
  readonly cpu_s: number;
  /**
   * The provisioner's event-loop delay p99 between the first create and the last PV (prom-client's
   * 10 ms resolution). Absent for the Go reference and from reports before 2026-11-27.
   */
  readonly event_loop_delay_p99_ms?: number;
}

/** A bare client creating PVs of the same shape with the provisioner's concurrency. */
export interface CeilingResult {
  readonly pvs: number;
  readonly concurrency: number;
  readonly seconds: number;
  readonly ceiling_pv_per_s: number;
  /** `burst.claims_per_s / ceiling_pv_per_s`. */
  readonly ratio_to_ceiling: number;
}

/** The burst's claims deleted at once; the provisioner deletes their PVs and directories. */
export interface DeleteResult {
  readonly claims: number;
  /** First claim delete sent → last PV seen DELETED. */
  readonly seconds_to_all_pv_deleted: number;
  /** First claim delete sent → the root holds no volume directory. */
  readonly seconds_to_all_dirs_deleted: number;
  /** `claims / seconds_to_all_dirs_deleted`. */
  readonly claims_per_s: number;
  /** Provisioner CPU between the first delete and the last directory gone. */
  readonly cpu_s: number;
}

/** The provisioners the scale scenario starts: the Go library v13 reference and ours. */
export type ScaleImplementation = 'go' | 'ours';

/** One provisioner start among many objects that are not its own, then N claims of its own. */
export interface ScaleRun {
  readonly implementation: ScaleImplementation;
  /** Round index from 0; rounds rotate which implementation starts first. */
  readonly round: number;
  /** Process spawn → the controller's caches are synced and its workers start. */
  readonly startup_ready_s: number;
  /** RSS right after caches synced, before any claim. */
  readonly rss_ready_mb: number;
  /** PVs of the run's claims seen when the run ended. */
  readonly pvs_seen: number;
  /** First claim create sent → last PV seen; null when not every claim got its PV in time. */
  readonly seconds_to_all_pv: number | null;
  /** `claims / seconds_to_all_pv`; null with it. */
  readonly claims_per_s: number | null;
  readonly rss_after_provisioning_mb: number;
  /** Peak RSS over the process's life (VmHWM). */
  readonly peak_rss_mb: number;
}

/** RSS of the control plane's storage processes, read when a step's provisioners have run. */
export interface ControlPlaneMemory {
  readonly etcd_rss_mb: number;
  readonly kube_apiserver_rss_mb: number;
}

/** The cluster filled to one size, and every provisioner run at that size. */
export interface ScaleStep {
  /** Foreign pairs in the cluster during this step's runs. */
  readonly existing_pairs: number;
  /** Time to create the pairs this step added, bound to each other (`scale-fill.ts`). */
  readonly fill_seconds: number;
  /** Absent for a `TESTENV_KUBECONFIG` cluster without `TESTENV_DIR`. */
  readonly control_plane?: ControlPlaneMemory | undefined;
  readonly runs: readonly ScaleRun[];
}

/**
 * Per-pair growth of one implementation between the first and the last step: the difference of the
 * medians over the rounds, divided by the pairs added.
 */
export interface ScaleGrowth {
  readonly rss_ready_bytes_per_pair: number;
  readonly startup_ready_us_per_pair: number;
}

/**
 * M foreign PV/PVC pairs bound to each other (one step per size, filled in turn), the Go library and
 * ours started one after the other among them, each provisioning N claims of its own.
 */
export interface ScaleResult {
  readonly claims: number;
  readonly rounds: number;
  /** Client QPS and burst both provisioners get. */
  readonly qps: number;
  readonly burst: number;
  /**
   * `stopped`: kube-controller-manager was stopped while the pairs were filled and the provisioners
   * ran, and the bench annotated its claims as the PV binder would (see docs/benchmarks.md);
   * `running`: the bench could not stop it (a cluster without `TESTENV_DIR`).
   */
  readonly binder: 'stopped' | 'running';
  readonly steps: readonly ScaleStep[];
  /** From the first step to the last; absent with one step. */
  readonly growth?: Readonly<Record<ScaleImplementation, ScaleGrowth>> | undefined;
}

/** N claims annotated before the provisioner starts; it works them off from its ready moment. */
export interface BacklogResult {
  readonly claims: number;
  /** Process spawn → caches synced (the informers list the N claims first). */
  readonly startup_s: number;
  /** Caches synced → last PV seen. */
  readonly seconds_from_ready: number;
  /** `claims / seconds_from_ready`. */
  readonly claims_per_s: number;
  /** Provisioner CPU between ready and the last PV, per claim. */
  readonly cpu_ms_per_claim: number;
  /**
   * The part of `cpu_ms_per_claim` the kernel spent on the provisioner's behalf (system time: file
   * system and network calls, page faults). Absent from reports before 2026-11-26's eighth round.
   */
  readonly cpu_system_ms_per_claim?: number | undefined;
  /**
   * Claim events (`Provisioning`, `ProvisioningSucceeded`, counts summed) in the API when the last PV
   * was seen, per claim: 2 when the events kept up with the work. Event writes are part of the CPU
   * above, and the two implementations write them at different rates.
   */
  readonly events_per_claim_at_last_pv: number;
  /**
   * CPU of the control plane's processes (etcd, kube-apiserver, kube-controller-manager,
   * kube-scheduler) between ready and the last PV, per claim; absent when the bench does not know
   * their processes. It holds the provisioner's requests and the binding kube-controller-manager
   * does meanwhile, which grows with the time a backlog takes.
   */
  readonly control_plane_cpu_ms_per_claim?: number | undefined;
  /**
   * Requests kube-apiserver served between the provisioner's start and the last PV (its first PVs
   * come as its caches sync), per claim, by `"<VERB>
   * <resource>[/<subresource>]"` (those at 0.01 per claim or more): every client's, so
   * kube-controller-manager's binds (`PUT persistentvolumeclaims`) and events sit beside the
   * provisioner's PV creates and events.
   */
  readonly api_requests_per_claim?: Readonly<Record<string, number>> | undefined;
  readonly peak_rss_mb: number;
}

/** One implementation in one round of {@link CompareResult}, at the shared client settings. */
export interface ImplementationRound {
  /** Process spawn → caches synced, in an empty namespace. */
  readonly startup_s: number;
  /** RSS right after caches synced, before any claim. */
  readonly rss_idle_mb: number;
  /** The file-backed part of `rss_idle_mb`: the touched pages of the executable and its libraries. */
  readonly rss_idle_file_mb: number;
  readonly burst: BurstResult;
  /** Provisioner CPU between the first claim create and the last PV of the burst, per claim. */
  readonly burst_cpu_ms_per_claim: number;
  /** Last PV of the burst seen → last claim annotated, as a share of first create → last annotated. */
  readonly burst_lag_after_annotation: number;
  readonly delete: DeleteResult;
  readonly backlog: BacklogResult;
  /** A bare client of this implementation (client-go, or our client stack) creating PVs, 4 at a time. */
  readonly ceiling_pv_per_s: number;
  /**
   * That bare client's CPU per create: its whole process (every thread), over the creates. Absent
   * from reports before 2026-11-26's eighth round, when our bare client ran inside the bench.
   */
  readonly ceiling_cpu_ms_per_pv?: number | undefined;
}

/** One round of our library alone: as {@link ImplementationRound}; its bare client is ours'. */
export type LibraryRound = Omit<ImplementationRound, 'ceiling_pv_per_s' | 'ceiling_cpu_ms_per_pv'>;

/** A bare client's creates in one round: as `ceiling_pv_per_s` and `ceiling_cpu_ms_per_pv`. */
export interface BareClientRound {
  readonly pv_per_s: number;
  readonly cpu_ms_per_pv: number;
}

/**
 * The Go library v13 (the shape of its hostpath example) and ours, side by side in one run, rounds
 * rotating which goes first, at the same client QPS/burst and workers.
 */
export interface CompareResult {
  readonly claims: number;
  readonly qps: number;
  readonly burst: number;
  readonly workers: number;
  /** Index i of both lists is round i. */
  readonly go: readonly ImplementationRound[];
  readonly ours: readonly ImplementationRound[];
  /**
   * Our library alone, round by round: the custom-provisioner example, which makes a directory and
   * returns the PV as the Go example does, where ours adds safe-fs's crash-safe, isolating create.
   * Absent from reports before 2026-11-26.
   */
  readonly library?: readonly LibraryRound[];
  /**
   * `node:http2` alone creating the same PVs in each round (no client code: one session,
   * `JSON.stringify` and `JSON.parse`): the least a Node.js process spends per request, beside
   * client-go's `ceiling_cpu_ms_per_pv`. Absent from reports before 2026-11-26's eighth round.
   */
  readonly node_http2?: readonly BareClientRound[];
  /** The Go reference at client-go's defaults (5 QPS / burst 10), as the example ships; when run. */
  readonly go_defaults?: BurstResult;
}

/** The provisioners the nfs-operations scenario measures: ours (nfs-subdir) and upstream v4.0.2. */
export type NfsImplementation = 'ours' | 'upstream';

/** NFS operations of one phase per claim, by operation (`CREATE`, `LOOKUP`, …); `total` sums them. */
export type NfsOperationsPerClaim = Readonly<Record<string, number>>;

/** One implementation's claims provisioned, then deleted, on the guest's NFS mount. */
export interface NfsImplementationResult {
  readonly implementation: NfsImplementation;
  /** Operations the mount sent between the claims' creation and the last one Bound. */
  readonly provision: NfsOperationsPerClaim;
  /** Operations the mount sent between the claims' deletion and the last PV gone. */
  readonly delete: NfsOperationsPerClaim;
  /** Claims seen Bound after the provision phase. */
  readonly bound: number;
  /** PVs there were before the delete phase; all are gone after it. */
  readonly deleted: number;
  /** Wall time of each phase in the guest, per claim (User-Mode Linux: indicative only). */
  readonly provision_ms_per_claim: number;
  readonly delete_ms_per_claim: number;
}

/**
 * Claims provisioned and deleted by each implementation in turn on one NFSv4.1 mount in the test
 * guest, with the mount's per-operation counters read around each phase.
 */
export interface NfsOperationsResult {
  readonly claims: number;
  /** Ours, then upstream when it ran. */
  readonly results: readonly NfsImplementationResult[];
}

/** Where an unbundled program comes from: the Go reference, this checkout's packages or `--baseline`'s. */
export type UnbundledInstall = 'go' | 'now' | 'baseline';

/** One program of {@link UnbundledResult}; index i of each list is round i. */
export interface UnbundledProgram {
  /** The example's or the CLI's name. */
  readonly program: string;
  readonly install: UnbundledInstall;
  /** RSS once its caches synced. */
  readonly rss_synced_mb: readonly number[];
  /** RSS after the idle wait. */
  readonly rss_idle_mb: readonly number[];
  /** Median of the per-round ratios `rss_idle_mb` ÷ Go's; absent for Go. */
  readonly idle_ratio_to_go?: number;
}

/** `import('@kube-provisioner/controller')` in fresh processes; index i of each list is process i. */
export interface ImportTiming {
  readonly install: Exclude<UnbundledInstall, 'go'>;
  readonly ms: readonly number[];
  /** CPU time (user + system) of the import: steadier than wall time on a busy machine. */
  readonly cpu_ms: readonly number[];
  /** Peak RSS of the process. */
  readonly peak_rss_mb: readonly number[];
  readonly median_ms: number;
  readonly median_cpu_ms: number;
}

/**
 * Idle memory as library users run ours: the custom-provisioner example and each CLI installed from
 * its packed npm package, run with plain `node` and a kubeconfig file, beside the Go reference, rounds
 * rotating which starts first; then the import of the controller package timed.
 */
export interface UnbundledResult {
  readonly rounds: number;
  readonly idle_seconds: number;
  /** Go first, then this checkout's programs, then the baseline's. */
  readonly programs: readonly UnbundledProgram[];
  /** Plain `node` with `node:http2` imported, idle: the least any Node.js provisioner holds, per round. */
  readonly node_alone_idle_mb: readonly number[];
  readonly node_alone_idle_ratio_to_go: number;
  readonly import: readonly ImportTiming[];
}

/** Results by scenario name; a scenario not run is absent. */
export interface ScenarioResults {
  readonly burst?: BurstResult;
  readonly ceiling?: CeilingResult;
  readonly delete?: DeleteResult;
  readonly scale?: ScaleResult;
  readonly compare?: CompareResult;
  readonly nfs_operations?: NfsOperationsResult;
  readonly unbundled?: UnbundledResult;
}

/** Where and on what the run happened. */
export interface RunEnvironment {
  readonly machine: {
    readonly cores: number;
    readonly cpu_model: string;
    readonly memory_mb: number;
  };
  /** 1-, 5- and 15-minute load averages when the run started and when it ended. */
  readonly load_average: { readonly start: readonly number[]; readonly end: readonly number[] };
  readonly node_version: string;
  readonly kubernetes_version: string;
  /** `HEAD`, with `-dirty` when the working tree has changes. */
  readonly git_commit: string;
  readonly started_at: string;
}

/** The whole JSON document. */
export interface BenchReport extends RunEnvironment {
  /**
   * How the hostpath CLI ran: bundled under the image's Node.js flags, or from TypeScript sources.
   * Absent when no scenario ran it (nfs-operations and unbundled run their programs their own way).
   */
  readonly ours_build?: OursBuild;
  /**
   * Flags given to every hostpath provisioner beyond the bench's own: Node.js flags, then CLI flags.
   * Absent with `ours_build`.
   */
  readonly provisioner_flags?: readonly string[];
  /**
   * Where the provisioners' roots were made and on what file system (its cost is part of each
   * provisioner's CPU per claim): `ext4, no journal` for an ext4 without one, whose creates after
   * deletions cost more (`volume-file-system.ts`). Absent from reports before 2026-11-26, which used
   * the temporary directory, and with `ours_build`.
   */
  readonly volume_dir?: { readonly path: string; readonly file_system: string };
  readonly scenarios: ScenarioResults;
}
