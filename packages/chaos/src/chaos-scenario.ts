/**
 * One target through the chaos: claims created in waves with the leader SIGKILLed at a random point
 * of each, every volume stamped with a probe file; then every claim deleted in waves under more
 * SIGKILLs and one SIGSTOP longer than the lease. The result holds what the oracle judges.
 */
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AuditReport } from '@kube-provisioner/audit';
import type { KubeApi } from '@kube-provisioner/controller';
import { findOverlaps, type LeaseTenure, type Overlap } from '@kube-provisioner/controller/testing';
import { waitFor } from '@kube-provisioner/testenv';
import type { ChaosTarget, DataFate } from './chaos-targets.ts';
import { ClaimFleet, type FleetClaim } from './claim-fleet.ts';
import { killLeader, type LeaderFault, pauseLeader } from './leader-faults.ts';
import type { LeaseTracker } from './lease-tracker.ts';
import type { SeededRandom } from './seeded-random.ts';
import { settledAudit } from './settled-audit.ts';

/** How big a run is. */
export interface ScenarioPlan {
  /** Claims per target. */
  readonly claims: number;
  /** Creation waves, one SIGKILL of the leader in each. */
  readonly createWaves: number;
  /** Deletion waves, one SIGKILL of the leader in each but the last, which SIGSTOPs it instead. */
  readonly deleteWaves: number;
  /** How long the leader is stopped; longer than the lease duration (15 s). */
  readonly pauseMs: number;
  /** The latest random moment of a kill after its wave started. */
  readonly maxKillDelayMs: number;
}

/** What happened to one target. */
export interface ScenarioResult {
  readonly target: string;
  readonly claims: number;
  readonly faults: readonly LeaderFault[];
  /** Claims never seen Bound. */
  readonly notBound: readonly string[];
  /** Claims seen bound to a second PV. */
  readonly rebound: readonly string[];
  /** Claims whose probe file was missing or wrong where its data should be. */
  readonly dataLost: readonly string[];
  /** Claims whose PV or directory outlived a delete. */
  readonly lostDeletes: readonly string[];
  readonly auditAfterCreate: AuditReport | undefined;
  readonly auditAfterDelete: AuditReport | undefined;
  readonly tenures: readonly LeaseTenure[];
  readonly workLines: number;
  /** Work lines a SIGSTOP froze between their lease check and their timestamp; not judged. */
  readonly resumeLines: number;
  readonly overlaps: readonly Overlap[];
}

const probeFile = 'chaos-probe.txt';

/** The fate of claim `index`: one in ten archived (where the target can), one in ten retained. */
function fateOf(target: ChaosTarget, index: number): DataFate {
  if (index % 10 === 0 && target.classes.archive !== undefined) return 'archive';
  if (index % 10 === 1) return 'retain';
  return 'delete';
}

function waves<T>(items: readonly T[], count: number): T[][] {
  const size = Math.ceil(items.length / count);
  return Array.from({ length: count }, (_, i) => items.slice(i * size, (i + 1) * size)).filter(
    (w) => w.length > 0,
  );
}

/** Drives one target; {@link createPhase}, then {@link deletePhase}, then {@link result}. */
export class ChaosScenario {
  readonly #target: ChaosTarget;
  readonly #fleet: ClaimFleet;
  readonly #lease: LeaseTracker;
  readonly #random: SeededRandom;
  readonly #plan: ScenarioPlan;
  readonly #api: KubeApi;
  readonly #faults: LeaderFault[] = [];
  readonly #dirs = new Map<string, string>();
  readonly #dataLost = new Set<string>();
  readonly #lostDeletes = new Set<string>();
  #auditAfterCreate: AuditReport | undefined;
  #auditAfterDelete: AuditReport | undefined;

  constructor(options: {
    target: ChaosTarget;
    namespace: string;
    lease: LeaseTracker;
    random: SeededRandom;
    plan: ScenarioPlan;
    api: KubeApi;
    kubeConfig: ConstructorParameters<typeof ClaimFleet>[0];
  }) {
    this.#target = options.target;
    this.#lease = options.lease;
    this.#random = options.random;
    this.#plan = options.plan;
    this.#api = options.api;
    const claims: FleetClaim[] = Array.from({ length: options.plan.claims }, (_, index) => {
      const fate = fateOf(options.target, index);
      return {
        name: `claim-${String(index).padStart(4, '0')}`,
        fate,
        storageClassName: options.target.classes[fate] ?? '',
        uid: undefined,
        volumeName: undefined,
        reboundTo: undefined,
      };
    });
    this.#fleet = new ClaimFleet(options.kubeConfig, options.namespace, claims);
  }

  get #waitMs(): number {
    return 180_000 + this.#plan.claims * 200;
  }

  /** Runs `wave` while `fault` strikes the leader at a random moment of it. */
  async #underFault(wave: () => Promise<void>, fault: () => Promise<LeaderFault>): Promise<void> {
    const delayMs = this.#random.integer(0, this.#plan.maxKillDelayMs);
    const strike = (async () => {
      // The delay is the random moment of the fault; nothing waits on it.
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      this.#faults.push(await fault());
    })();
    await Promise.all([wave(), strike]);
  }

  #kill(phase: LeaderFault['phase']): () => Promise<LeaderFault> {
    return () => killLeader(this.#target.replicas, this.#lease, phase);
  }

  #pause(phase: LeaderFault['phase']): () => Promise<LeaderFault> {
    return () => pauseLeader(this.#target.replicas, this.#lease, phase, this.#plan.pauseMs);
  }

  /** Creates every claim in waves under SIGKILLs, the last under a SIGSTOP; stamps each volume; audits. */
  async createPhase(): Promise<void> {
    const all = waves(this.#fleet.claims, this.#plan.createWaves);
    for (const [index, wave] of all.entries()) {
      await this.#underFault(
        () => this.#fleet.create(wave),
        index === all.length - 1 ? this.#pause('create') : this.#kill('create'),
      );
      // A claim never bound is a finding of the result, not a reason to stop the run.
      await this.#fleet.waitBound(wave, this.#waitMs).catch(() => undefined);
      await this.#stamp(wave);
    }
    await this.#fleet.observe();
    await this.#checkProbes(this.#fleet.claims, (_claim, dir) => dir);
    this.#auditAfterCreate = await this.#settledAudit();
  }

  /** Deletes every claim in waves under SIGKILLs, the last under a SIGSTOP; checks what is left; audits. */
  async deletePhase(): Promise<void> {
    const all = waves(this.#fleet.claims, this.#plan.deleteWaves);
    for (const [index, wave] of all.entries()) {
      await this.#underFault(
        () => this.#fleet.delete(wave),
        index === all.length - 1 ? this.#pause('delete') : this.#kill('delete'),
      );
    }
    await this.#waitVolumesGone();
    const target = this.#target;
    for (const claim of this.#fleet.claims) {
      const dir = this.#dirs.get(claim.name);
      if (dir === undefined) continue;
      if (claim.fate === 'delete' && existsSync(dir)) this.#lostDeletes.add(`${claim.name}: ${dir} remains`);
      if (claim.fate === 'archive' && existsSync(dir))
        this.#lostDeletes.add(`${claim.name}: ${dir} not archived`);
    }
    await this.#checkProbes(
      this.#fleet.claims.filter((claim) => claim.fate !== 'delete'),
      (claim, dir) => (claim.fate === 'archive' ? target.archivedDir(dir) : dir),
    );
    this.#auditAfterDelete = await this.#settledAudit();
  }

  /** Everything the oracle judges. */
  result(): ScenarioResult {
    const claims = this.#fleet.claims;
    const tenures = this.#lease.tenures();
    const workLines = this.#target.replicas.workLines();
    return {
      target: this.#target.name,
      claims: claims.length,
      faults: [...this.#faults],
      notBound: claims.filter((claim) => claim.volumeName === undefined).map((claim) => claim.name),
      rebound: claims.filter((claim) => claim.reboundTo !== undefined).map((claim) => claim.name),
      dataLost: [...this.#dataLost],
      lostDeletes: [...this.#lostDeletes],
      auditAfterCreate: this.#auditAfterCreate,
      auditAfterDelete: this.#auditAfterDelete,
      tenures,
      workLines: workLines.length,
      resumeLines: this.#target.replicas.resumeLines().length,
      overlaps: findOverlaps(tenures, workLines),
    };
  }

  async #stamp(claims: readonly FleetClaim[]): Promise<void> {
    const volumes = await this.#fleet.volumes();
    for (const claim of claims) {
      const pv = volumes.get(claim.volumeName ?? '');
      if (pv === undefined || claim.uid === undefined) continue;
      const dir = this.#target.volumeDir(pv);
      this.#dirs.set(claim.name, dir);
      await writeFile(join(dir, probeFile), claim.uid).catch((err: Error) => {
        this.#dataLost.add(`${claim.name}: could not write to its volume ${dir}: ${err.message}`);
      });
    }
  }

  async #checkProbes(
    claims: readonly FleetClaim[],
    where: (claim: FleetClaim, dir: string) => string,
  ): Promise<void> {
    for (const claim of claims) {
      const dir = this.#dirs.get(claim.name);
      if (dir === undefined) continue;
      const path = join(where(claim, dir), probeFile);
      const content = await readFile(path, 'utf8').catch(() => undefined);
      if (content !== claim.uid)
        this.#dataLost.add(`${claim.name}: ${path} ${content === undefined ? 'is missing' : 'changed'}`);
    }
  }

  /** Waits until every PV that should go is gone; those left count as lost deletes. */
  async #waitVolumesGone(): Promise<void> {
    const keptPv = (claim: FleetClaim): boolean => claim.fate === 'retain' && this.#target.retainKeepsPv;
    const going = this.#fleet.claims.filter((claim) => claim.volumeName !== undefined && !keptPv(claim));
    const remaining = async (): Promise<FleetClaim[]> => {
      const volumes = await this.#fleet.volumes();
      return going.filter((claim) => volumes.has(claim.volumeName ?? ''));
    };
    try {
      await waitFor(async () => (await remaining()).length === 0, {
        timeoutMs: this.#waitMs,
        intervalMs: 1000,
        description: `the PVs of ${this.#target.name} to be deleted`,
      });
    } catch {
      for (const claim of await remaining())
        this.#lostDeletes.add(`${claim.name}: PV ${claim.volumeName} remains`);
    }
  }

  #settledAudit(): Promise<AuditReport> {
    return settledAudit(this.#api, this.#target);
  }
}
