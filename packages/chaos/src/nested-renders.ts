/**
 * The nested-render phase: pairs of claims in two namespaces whose class makes the annotation `path`
 * their directory, one asking for `n<i>` and the other for `n<i>/db`, created at the same moment
 * while the leader is SIGKILLed. At most one claim of a pair may get a volume, no volume may lie
 * inside another, and deleting every outer claim (under another SIGKILL) must leave every inner
 * volume's data where it was. Then every claim of the phase goes, and the audit must be clean.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AuditReport } from '@kube-provisioner/audit';
import type { V1PersistentVolume } from '@kubernetes/client-node';
import { ClaimFleet, type FleetClaim } from './claim-fleet.ts';
import { holdsWithin } from './holds-within.ts';
import { killLeaderDuring, type LeaderFault } from './leader-faults.ts';
import type { PhaseContext } from './phase-context.ts';
import type { SeededRandom } from './seeded-random.ts';
import { settledAudit } from './settled-audit.ts';

/** What the nested-render phase found. */
export interface NestedRendersResult {
  readonly target: string;
  readonly pairs: number;
  /** Pairs where neither claim got a volume in the time allowed. */
  readonly neitherBound: readonly string[];
  /** Pairs where both claims got a volume. */
  readonly bothBound: readonly string[];
  /** Volume directories that lay inside another volume of the phase. */
  readonly nested: readonly string[];
  /** Inner claims whose probe file was missing or changed after the outer claims were deleted. */
  readonly dataLost: readonly string[];
  /** PVs of the phase left after all its claims were deleted. */
  readonly lostDeletes: readonly string[];
  readonly faults: readonly LeaderFault[];
  readonly audit: AuditReport | undefined;
}

/** Where and how the phase runs. */
export interface NestedRendersOptions extends PhaseContext {
  readonly random: SeededRandom;
  /** Namespaces of the outer and of the inner claims. */
  readonly namespaces: readonly [outer: string, inner: string];
  readonly pairs: number;
  /** The latest random moment of a kill after its step started. */
  readonly maxKillDelayMs: number;
}

const probeFile = 'chaos-probe.txt';

function pairClaims(count: number, side: 'outer' | 'inner', storageClassName: string): FleetClaim[] {
  return Array.from({ length: count }, (_, index) => {
    const parent = `n${String(index).padStart(3, '0')}`;
    return {
      name: `${side}-${String(index).padStart(3, '0')}`,
      fate: 'delete' as const,
      storageClassName,
      annotations: { path: side === 'outer' ? parent : `${parent}/db` },
      uid: undefined,
      volumeName: undefined,
      reboundTo: undefined,
    };
  });
}

/** Runs the phase on `options.target`. */
export async function runNestedRenders(options: NestedRendersOptions): Promise<NestedRendersResult> {
  const { target, pairs } = options;
  const outer = new ClaimFleet(
    options.kubeConfig,
    options.namespaces[0],
    pairClaims(pairs, 'outer', target.nestedClass),
  );
  const inner = new ClaimFleet(
    options.kubeConfig,
    options.namespaces[1],
    pairClaims(pairs, 'inner', target.nestedClass),
  );
  const faults: LeaderFault[] = [];
  const underKill = async (step: () => Promise<unknown>): Promise<void> => {
    faults.push(
      await killLeaderDuring(step, {
        replicas: target.replicas,
        lease: options.lease,
        phase: 'nested',
        random: options.random,
        maxDelayMs: options.maxKillDelayMs,
      }),
    );
  };

  await underKill(() => Promise.all([outer.create(outer.claims), inner.create(inner.claims)]));
  const settled = (index: number) =>
    outer.claims[index]?.volumeName !== undefined || inner.claims[index]?.volumeName !== undefined;
  await holdsWithin(
    async () => {
      await Promise.all([outer.observe(), inner.observe()]);
      return outer.claims.every((_, index) => settled(index));
    },
    options.waitMs,
    'one claim of every pair to be Bound',
  );
  const names = (side: FleetClaim[]) => side.map((claim) => claim.name);
  const neitherBound = names(outer.claims.filter((_, index) => !settled(index)));
  const bothBound = names(
    outer.claims.filter((claim, index) => claim.volumeName !== undefined && inner.claims[index]?.volumeName),
  );

  const volumes = await outer.volumes();
  const dirOf = (claim: FleetClaim): string | undefined => {
    const pv: V1PersistentVolume | undefined = volumes.get(claim.volumeName ?? '');
    return pv === undefined ? undefined : target.volumeDir(pv);
  };
  const dirs = [...outer.claims, ...inner.claims].flatMap((claim) => dirOf(claim) ?? []);
  const nested = dirs.filter((dir) => dirs.some((other) => dir.startsWith(`${other}/`)));
  const stamped = inner.claims.filter((claim) => dirOf(claim) !== undefined);
  for (const claim of stamped) await writeFile(join(dirOf(claim) ?? '', probeFile), claim.uid ?? '');

  await underKill(() => outer.delete(outer.claims));
  const outerGone = await holdsWithin(
    async () => {
      const live = await outer.volumes();
      return outer.claims.every((claim) => !live.has(claim.volumeName ?? ''));
    },
    options.waitMs,
    'the outer claims’ PVs to be deleted',
  );
  const dataLost: string[] = [];
  for (const claim of stamped) {
    const path = join(dirOf(claim) ?? '', probeFile);
    const content = await readFile(path, 'utf8').catch(() => undefined);
    if (content !== claim.uid) dataLost.push(`${claim.name}: ${path} ${content ?? 'is missing'}`);
  }
  if (!outerGone) dataLost.push('the outer claims’ PVs were not all deleted in time');

  await inner.delete(inner.claims);
  const lostDeletes: string[] = [];
  const allGone = await holdsWithin(
    async () => {
      const live = await inner.volumes();
      return [...live.values()].every((pv) => pv.spec?.storageClassName !== target.nestedClass);
    },
    options.waitMs,
    'every PV of the phase to be deleted',
  );
  if (!allGone) {
    const live = await inner.volumes();
    for (const pv of live.values()) {
      if (pv.spec?.storageClassName === target.nestedClass) lostDeletes.push(pv.metadata?.name ?? '');
    }
  }
  return {
    target: target.name,
    pairs,
    neitherBound,
    bothBound,
    nested,
    dataLost,
    lostDeletes,
    faults,
    audit: await settledAudit(options.api, target),
  };
}
