/**
 * The take-back phase: claims of the target's keeping classes (nfs-subdir archiving and retaining,
 * hostpath `onDelete: retain`) are bound, stamped and deleted; then new claims of the same namespace
 * name the old PVs in the target's take-back annotation, two of them the same PV, all created at
 * once while the leader is SIGKILLed. Every taker must be Bound to a volume holding the old data,
 * each old stamp must be in exactly one place of the root, one of the two rivals exactly must get
 * the data, and the audit must be clean.
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AuditReport } from '@kube-provisioner/audit';
import type { KeepingClass } from './chaos-targets.ts';
import { ClaimFleet, type FleetClaim, newClaim } from './claim-fleet.ts';
import { holdsWithin } from './holds-within.ts';
import { killLeaderDuring, type LeaderFault } from './leader-faults.ts';
import type { PhaseContext } from './phase-context.ts';
import type { SeededRandom } from './seeded-random.ts';
import { settledAudit } from './settled-audit.ts';

const stampFile = 'chaos-take-back.txt';

/** What the take-back phase found. */
export interface TakeBackResult {
  readonly target: string;
  readonly claims: number;
  /** Old claims never Bound, and takers (rivals aside) never Bound. */
  readonly notBound: readonly string[];
  /** Takers whose volume does not hold the old stamp. */
  readonly dataMissing: readonly string[];
  /** Old stamps found in no place or in more than one place of the root. */
  readonly notInOnePlace: readonly string[];
  /** How many of the two rivals asking for the same data were Bound; must be 1. */
  readonly rivalsBound: number;
  /** PVs of the phase left after its claims were deleted. */
  readonly lostDeletes: readonly string[];
  readonly fault: LeaderFault | undefined;
  /** The audit while the takers are Bound, and after every claim of the phase is gone. */
  readonly auditBound: AuditReport | undefined;
  readonly audit: AuditReport | undefined;
}

/** Where and how the phase runs. */
export interface TakeBackOptions extends PhaseContext {
  readonly random: SeededRandom;
  readonly namespace: string;
  /** Old volumes taken back (spread over the target's keeping classes), plus one the two rivals ask for. */
  readonly claims: number;
  readonly maxKillDelayMs: number;
}

/** Runs the phase on `options.target`. */
export async function runTakeBackUnderKill(options: TakeBackOptions): Promise<TakeBackResult> {
  const { target } = options;
  const { annotation, from: keepingClasses } = target.takeBack;
  const plain = target.classes.delete;
  if (plain === undefined || keepingClasses.length === 0)
    throw new Error(`${target.name} cannot take data back`);
  const takerOf = (name: string, fromPv: string | undefined): FleetClaim =>
    newClaim(name, plain, { annotations: { [annotation]: fromPv ?? '' } });
  const old = Array.from({ length: options.claims + 1 }, (_, i) => {
    const keeping = keepingClasses[i % keepingClasses.length] as KeepingClass;
    return newClaim(`old-${String(i).padStart(3, '0')}`, keeping.storageClassName, { fate: keeping.fate });
  });
  const fleet = new ClaimFleet(options.kubeConfig, options.namespace, old);
  const bound = (claims: readonly FleetClaim[]) => async () => {
    await fleet.observe();
    return claims.every((c) => c.volumeName !== undefined);
  };
  await fleet.create(old);
  await holdsWithin(bound(old), options.waitMs, 'every old claim of the take-back phase to be Bound');
  const volumes = await fleet.volumes();
  for (const c of old) {
    const pv = volumes.get(c.volumeName ?? '');
    if (pv !== undefined && c.uid !== undefined)
      await writeFile(join(target.volumeDir(pv), stampFile), c.uid);
  }
  await fleet.delete(old);
  const lostOld = await fleet.volumesLeft(old, options.waitMs);

  const usable = old.filter((c) => c.volumeName !== undefined && !lostOld.includes(c.volumeName));
  const contested = usable.at(-1);
  const takers = usable
    .slice(0, -1)
    .map((c) => ({ from: c, taker: takerOf(`back-${c.name}`, c.volumeName) }));
  const rivals =
    contested === undefined ? [] : ['a', 'b'].map((side) => takerOf(`rival-${side}`, contested.volumeName));
  const newClaims = [...takers.map(({ taker }) => taker), ...rivals];
  const takerFleet = new ClaimFleet(options.kubeConfig, options.namespace, newClaims);
  const fault = await killLeaderDuring(() => takerFleet.create(newClaims), {
    replicas: target.replicas,
    lease: options.lease,
    phase: 'take-back',
    random: options.random,
    maxDelayMs: options.maxKillDelayMs,
  });
  const takersBound = async (): Promise<boolean> => {
    await takerFleet.observe();
    return (
      takers.every(({ taker }) => taker.volumeName !== undefined) &&
      rivals.some((rival) => rival.volumeName !== undefined)
    );
  };
  await holdsWithin(takersBound, options.waitMs, 'every taker of the take-back phase to be Bound');

  const newVolumes = await takerFleet.volumes();
  const holds = async (taker: FleetClaim, uid: string | undefined): Promise<boolean> => {
    const pv = newVolumes.get(taker.volumeName ?? '');
    if (pv === undefined) return false;
    const content = await readFile(join(target.volumeDir(pv), stampFile), 'utf8').catch(() => undefined);
    return content === uid;
  };
  const dataMissing: string[] = [];
  for (const { from, taker } of takers)
    if (taker.volumeName !== undefined && !(await holds(taker, from.uid)))
      dataMissing.push(`${taker.name}: no data of ${from.volumeName}`);
  const winners = rivals.filter((rival) => rival.volumeName !== undefined);
  for (const winner of winners)
    if (!(await holds(winner, contested?.uid)))
      dataMissing.push(`${winner.name}: no data of ${contested?.volumeName}`);
  const places = await stampPlaces(target.root);
  const notInOnePlace = usable.flatMap((c) => {
    const found = places.get(c.uid ?? '') ?? [];
    return found.length === 1
      ? []
      : [`${c.name} (${c.volumeName}): ${found.length} places ${found.join(', ')}`];
  });
  const auditBound = await settledAudit(options.api, target);

  await takerFleet.delete(newClaims);
  const lostDeletes = await takerFleet.volumesLeft(
    winners.concat(takers.map(({ taker }) => taker)),
    options.waitMs,
  );
  return {
    target: target.name,
    claims: takers.length,
    notBound: [...old, ...takers.map(({ taker }) => taker)]
      .filter((c) => c.volumeName === undefined)
      .map((c) => c.name),
    dataMissing,
    notInOnePlace,
    rivalsBound: winners.length,
    lostDeletes: [...lostOld, ...lostDeletes],
    fault,
    auditBound,
    audit: await settledAudit(options.api, target),
  };
}

/** Where each stamp is on the root: the volume directories (flat, as the default pattern makes them) by stamp. */
async function stampPlaces(root: string): Promise<Map<string, string[]>> {
  const places = new Map<string, string[]>();
  for (const name of await readdir(root)) {
    const stamp = await readFile(join(root, name, stampFile), 'utf8').catch(() => undefined);
    if (stamp !== undefined) places.set(stamp, [...(places.get(stamp) ?? []), name]);
  }
  return places;
}
