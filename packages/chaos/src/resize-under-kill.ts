/**
 * The resize phase: claims of a class with `allowVolumeExpansion: true` are bound, then all ask for
 * twice their size at once while the leader is SIGKILLed. Every PV and every claim must end at the
 * new size with no resize left in progress or failed, whoever of the replicas did it. Then the
 * claims go, and the audit must be clean.
 */
import type { AuditReport } from '@kube-provisioner/audit';
import { ClaimFleet, type FleetClaim } from './claim-fleet.ts';
import { holdsWithin } from './holds-within.ts';
import { killLeaderDuring, type LeaderFault } from './leader-faults.ts';
import type { PhaseContext } from './phase-context.ts';
import type { SeededRandom } from './seeded-random.ts';
import { settledAudit } from './settled-audit.ts';

/** What the resize phase found. */
export interface ResizeResult {
  readonly target: string;
  readonly claims: number;
  /** Claims that were not Bound in the time allowed, so were not resized. */
  readonly notBound: readonly string[];
  /** Claims whose PV or `status.capacity` did not reach the new size: `name: pv …, claim …`. */
  readonly notResized: readonly string[];
  /** Claims left with a resize status or a resize condition after reaching the size. */
  readonly leftInProgress: readonly string[];
  /** PVs of the phase left after its claims were deleted. */
  readonly lostDeletes: readonly string[];
  readonly fault: LeaderFault | undefined;
  readonly audit: AuditReport | undefined;
}

/** Where and how the phase runs. */
export interface ResizeOptions extends PhaseContext {
  readonly random: SeededRandom;
  readonly namespace: string;
  readonly claims: number;
  /** The latest random moment of the kill after the resize requests started. */
  readonly maxKillDelayMs: number;
}

/** Claims are created at 1Gi (see `ClaimFleet.create`) and grow to this. */
const newSize = '2Gi';

/** Runs the phase on `options.target`. */
export async function runResizeUnderKill(options: ResizeOptions): Promise<ResizeResult> {
  const { target } = options;
  const claims: FleetClaim[] = Array.from({ length: options.claims }, (_, index) => ({
    name: `grow-${String(index).padStart(3, '0')}`,
    fate: 'delete' as const,
    storageClassName: target.expandableClass,
    annotations: {},
    uid: undefined,
    volumeName: undefined,
    reboundTo: undefined,
  }));
  const fleet = new ClaimFleet(options.kubeConfig, options.namespace, claims);
  await fleet.create(claims);
  await holdsWithin(
    async () => {
      await fleet.observe();
      return claims.every((claim) => claim.volumeName !== undefined);
    },
    options.waitMs,
    'every claim of the resize phase to be Bound',
  );
  const bound = claims.filter((claim) => claim.volumeName !== undefined);

  const fault = await killLeaderDuring(() => fleet.resize(bound, newSize), {
    replicas: target.replicas,
    lease: options.lease,
    phase: 'resize',
    random: options.random,
    maxDelayMs: options.maxKillDelayMs,
  });
  const resized = async (): Promise<string[]> => {
    const [live, volumes] = await Promise.all([fleet.live(), fleet.volumes()]);
    return bound.flatMap((claim) => {
      const pvSize = volumes.get(claim.volumeName ?? '')?.spec?.capacity?.storage;
      const claimSize = live.get(claim.name)?.status?.capacity?.storage;
      return pvSize === newSize && claimSize === newSize
        ? []
        : [`${claim.name}: pv ${pvSize}, claim ${claimSize}`];
    });
  };
  await holdsWithin(
    async () => (await resized()).length === 0,
    options.waitMs,
    `every claim to hold ${newSize}`,
  );
  const notResized = await resized();
  const live = await fleet.live();
  const leftInProgress = bound.flatMap((claim) => {
    const status = live.get(claim.name)?.status;
    const resizing =
      Object.keys(status?.allocatedResourceStatuses ?? {}).length > 0 ||
      (status?.conditions ?? []).some((condition) => /Resiz/u.test(condition.type));
    return resizing ? [claim.name] : [];
  });

  await fleet.delete(claims);
  const gone = await holdsWithin(
    async () => {
      const volumes = await fleet.volumes();
      return claims.every((claim) => !volumes.has(claim.volumeName ?? ''));
    },
    options.waitMs,
    'every PV of the resize phase to be deleted',
  );
  const volumes = gone ? new Map() : await fleet.volumes();
  return {
    target: target.name,
    claims: options.claims,
    notBound: claims.filter((claim) => claim.volumeName === undefined).map((claim) => claim.name),
    notResized,
    leftInProgress,
    lostDeletes: claims.flatMap((claim) =>
      volumes.has(claim.volumeName ?? '') ? [claim.volumeName ?? ''] : [],
    ),
    fault,
    audit: await settledAudit(options.api, target),
  };
}
