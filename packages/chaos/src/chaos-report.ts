/** The chaos run as text for the test output: faults with recovery times, and every oracle count. */

import type { AuditReport } from '@kube-provisioner/audit';
import { overlapWindows } from '@kube-provisioner/controller/testing';
import type { ArchiveExpiryResult } from './archive-expiry-under-kill.ts';
import type { ChaosPlan } from './chaos-plan.ts';
import type { ScenarioResult } from './chaos-scenario.ts';
import type { CloneResult } from './clone-under-kill.ts';
import type { ClusterFault } from './cluster-faults.ts';
import type { HostileTenantResult } from './hostile-tenant.ts';
import type { NestedRendersResult } from './nested-renders.ts';
import type { ResizeResult } from './resize-under-kill.ts';
import type { SnapshotResult } from './snapshot-under-kill.ts';
import type { TakeBackResult } from './take-back-under-kill.ts';

/**
 * The results of the data-lifecycle phases on one target; archive expiry only where it sweeps
 * archives, snapshots only where it takes them.
 */
export interface LifecycleResults {
  readonly target: string;
  readonly expiry: ArchiveExpiryResult | undefined;
  readonly takeBack: TakeBackResult;
  readonly clone: CloneResult;
  readonly snapshot: SnapshotResult | undefined;
  readonly hostile: HostileTenantResult;
}

const seconds = (ms: number | undefined): string =>
  ms === undefined ? 'never' : `${(ms / 1000).toFixed(1)} s`;

/** One report for the whole run. */
export function formatChaosReport(
  plan: ChaosPlan,
  cluster: readonly ClusterFault[],
  results: readonly ScenarioResult[],
  nested: readonly NestedRendersResult[] = [],
  resizes: readonly ResizeResult[] = [],
  lifecycles: readonly LifecycleResults[] = [],
): string {
  const lines = [
    `chaos run: seed ${plan.seed}, ${plan.claims} claims per target (replay: npm run chaos -- --claims ${plan.claims} --seed ${plan.seed})`,
  ];
  for (const fault of cluster)
    lines.push(
      `  control plane: ${fault.fault} at ${new Date(fault.atMs).toISOString()} took ${seconds(fault.durationMs)}`,
    );
  for (const result of results) {
    lines.push(`${result.target}:`);
    for (const fault of result.faults) {
      lines.push(
        `  ${fault.phase} ${fault.signal} of the leader at ${new Date(fault.atMs).toISOString()}: leading again after ${seconds(fault.recoveryMs)}`,
      );
    }
    const recoveries = result.faults.flatMap((fault) =>
      fault.recoveryMs === undefined ? [] : [fault.recoveryMs],
    );
    if (recoveries.length > 0) {
      lines.push(
        `  recovery: max ${seconds(Math.max(...recoveries))}, mean ${seconds(recoveries.reduce((a, b) => a + b, 0) / recoveries.length)}`,
      );
    }
    lines.push(
      `  claims ${result.claims}, not bound ${result.notBound.length}, re-bound ${result.rebound.length}, data lost ${result.dataLost.length}, lost deletes ${result.lostDeletes.length}`,
      `  audit after create: ${result.auditAfterCreate?.findings.length ?? 'not run'} findings; after delete: ${result.auditAfterDelete?.findings.length ?? 'not run'} findings (${result.auditAfterDelete?.summary.archived ?? 0} archived, ${result.auditAfterDelete?.summary.retained ?? 0} retained directories)`,
      `  lease tenures ${result.tenures.length}, work lines ${result.workLines} (and ${result.resumeLines} finishing a stretch a SIGSTOP froze, not judged), lines outside the replica's tenure ${result.overlaps.length}`,
    );
    for (const window of overlapWindows(result.overlaps)) {
      lines.push(
        `    overlap: ${window.identity} logged ${window.lines} work lines from ${new Date(window.fromMs).toISOString()} to ${new Date(window.toMs).toISOString()} (${seconds(window.toMs - window.fromMs)}) without the lease`,
      );
    }
    for (const finding of [
      ...(result.auditAfterCreate?.findings ?? []),
      ...(result.auditAfterDelete?.findings ?? []),
    ].slice(0, 20)) {
      lines.push(`    audit: ${finding.kind}: ${finding.message}`);
    }
  }
  for (const result of nested) {
    lines.push(
      `${result.target} nested renders: ${result.pairs} pairs, both bound ${result.bothBound.length}, neither bound ${result.neitherBound.length}, nested volumes ${result.nested.length}, inner data lost ${result.dataLost.length}, lost deletes ${result.lostDeletes.length}, audit ${result.audit?.findings.length ?? 'not run'} findings, kills ${result.faults.length} (leading again after ${result.faults.map((fault) => seconds(fault.recoveryMs)).join(', ')})`,
    );
    for (const line of [...result.bothBound, ...result.nested, ...result.dataLost].slice(0, 20)) {
      lines.push(`    ${line}`);
    }
  }
  for (const result of resizes) {
    lines.push(
      `${result.target} resizes: ${result.claims} claims, not bound ${result.notBound.length}, not resized ${result.notResized.length}, left in progress ${result.leftInProgress.length}, lost deletes ${result.lostDeletes.length}, audit ${result.audit?.findings.length ?? 'not run'} findings, kill (leading again after ${seconds(result.fault?.recoveryMs)})`,
    );
    for (const line of [...result.notResized, ...result.leftInProgress].slice(0, 20))
      lines.push(`    ${line}`);
  }
  for (const lifecycle of lifecycles)
    lines.push(...expiryLines(lifecycle.expiry), ...lifecycleLines(lifecycle));
  return lines.join('\n');
}

const findings = (audit: AuditReport | undefined): string => `${audit?.findings.length ?? 'not run'}`;

/** The first findings of a phase's audits, one line each. */
const auditLines = (...audits: readonly (AuditReport | undefined)[]): string[] =>
  audits
    .flatMap((audit) => audit?.findings ?? [])
    .slice(0, 20)
    .map((finding) => `    audit: ${finding.kind}: ${finding.message}`);

function expiryLines(expiry: ArchiveExpiryResult | undefined): string[] {
  if (expiry === undefined) return [];
  return [
    `${expiry.target} archive expiry: ${expiry.expiring} expiring and ${expiry.lasting} kept archives, not archived ${expiry.notArchived.length}, removed early ${expiry.removedEarly.length}, left over ${expiry.leftOver.length}, data lost ${expiry.dataLost.length}, removed twice ${expiry.removedTwice}, ${expiry.leftAtKill} left when the sweeping leader was killed (${expiry.killedMidSweep ? 'mid-sweep' : 'no removal seen'}), audit ${findings(expiry.audit)} findings, kills (leading again after ${expiry.faults.map((fault) => seconds(fault.recoveryMs)).join(', ')})`,
    ...[...expiry.notArchived, ...expiry.removedEarly, ...expiry.leftOver, ...expiry.dataLost]
      .slice(0, 20)
      .map((line) => `    ${line}`),
    ...auditLines(expiry.audit),
  ];
}

const aimedAt = (kill: SnapshotResult['snapshotKill'], what: string): string =>
  `${kill?.aimed === true ? `mid-${what}` : `with no ${what} seen`} (leading again after ${seconds(kill?.fault.recoveryMs)})`;

function snapshotLines(snapshot: SnapshotResult | undefined): string[] {
  if (snapshot === undefined) return [];
  return [
    `${snapshot.target} snapshots: ${snapshot.snapshots} snapshots of ${snapshot.filesPerSource} files, each restored, not bound ${snapshot.notBound.length}, not ready ${snapshot.notReady.length}, cut copies ${snapshot.cutCopies.length} (not finished after the kill ${snapshot.notFinishedAfterKill.length}), not identical ${snapshot.notIdentical.length}, left in the snapshot area ${snapshot.leftInArea.length}, restore copies left ${snapshot.copiesLeft.length}, still protected ${snapshot.stillProtected.length}, not listed ${snapshot.notListed.length}, data left ${snapshot.dataLeft.length}, lost deletes ${snapshot.lostDeletes.length}, audit ${findings(snapshot.auditReady)} findings while ready and ${findings(snapshot.audit)} after, snapshot kill ${aimedAt(snapshot.snapshotKill, 'copy')}, restore kill ${aimedAt(snapshot.restoreKill, 'copy')}`,
    ...[
      ...snapshot.notBound,
      ...snapshot.notReady,
      ...snapshot.notFinishedAfterKill,
      ...snapshot.notIdentical,
      ...snapshot.leftInArea,
      ...snapshot.copiesLeft,
      ...snapshot.stillProtected,
      ...snapshot.notListed,
      ...snapshot.dataLeft,
    ]
      .slice(0, 20)
      .map((line) => `    ${line}`),
    ...auditLines(snapshot.auditReady, snapshot.audit),
  ];
}

function hostileLines(hostile: HostileTenantResult): string[] {
  return [
    `${hostile.target} hostile tenant: ${hostile.clones} clones of changing sources (${hostile.mutations.steps} changes, ${hostile.mutations.failures} refused), others' data changed ${hostile.othersChanged.length}, clones into unrecorded data provisioned ${hostile.refusedBound.length}, not bound ${hostile.notBound.length}, copies left ${hostile.copiesLeft.length}, peak RSS ${hostile.peakRssMiB} MiB, lost deletes ${hostile.lostDeletes.length}, audit ${findings(hostile.audit)} findings, kill ${hostile.kill?.aimed === true ? 'mid-copy' : 'with no copy seen'} (leading again after ${seconds(hostile.kill?.fault.recoveryMs)})`,
    ...[...hostile.othersChanged, ...hostile.refusedBound, ...hostile.notBound, ...hostile.copiesLeft]
      .slice(0, 20)
      .map((line) => `    ${line}`),
    ...auditLines(hostile.audit),
  ];
}

function lifecycleLines({ takeBack, clone, snapshot, hostile }: LifecycleResults): string[] {
  return [
    `${takeBack.target} take-back: ${takeBack.claims} claims, not bound ${takeBack.notBound.length}, data missing ${takeBack.dataMissing.length}, not in one place ${takeBack.notInOnePlace.length}, rivals bound ${takeBack.rivalsBound} of 2, lost deletes ${takeBack.lostDeletes.length}, audit ${findings(takeBack.auditBound)} findings while bound and ${findings(takeBack.audit)} after, kill (leading again after ${seconds(takeBack.fault?.recoveryMs)})`,
    ...[...takeBack.notBound, ...takeBack.dataMissing, ...takeBack.notInOnePlace]
      .slice(0, 20)
      .map((line) => `    ${line}`),
    `${clone.target} clones: ${clone.clones} clones of ${clone.filesPerSource} files, not bound ${clone.notBound.length}, not identical ${clone.notIdentical.length}, copies left ${clone.copiesLeft.length}, sources still protected ${clone.stillProtected.length}, lost deletes ${clone.lostDeletes.length}, audit ${findings(clone.audit)} findings, kill ${clone.kill?.aimed === true ? 'mid-copy' : 'with no copy seen'} (leading again after ${seconds(clone.kill?.fault.recoveryMs)})`,
    ...[...clone.notBound, ...clone.notIdentical, ...clone.copiesLeft, ...clone.stillProtected]
      .slice(0, 20)
      .map((line) => `    ${line}`),
    ...auditLines(takeBack.auditBound, takeBack.audit, clone.audit),
    ...snapshotLines(snapshot),
    ...hostileLines(hostile),
  ];
}
