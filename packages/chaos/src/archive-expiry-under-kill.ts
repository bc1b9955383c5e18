/**
 * The archive-expiry phase: claims of a class whose archives expire within seconds, and control
 * claims of a class keeping them an hour, are bound, filled and deleted, so their archives exist.
 * Once the short ones have expired the leader is SIGKILLed: its successor sweeps them as it starts
 * leading, and is SIGKILLed itself as soon as the first one vanishes, so the next leader finishes a
 * sweep cut short. Every expired archive must go with its record, none before its time, and every
 * control archive must stay; the audit must be clean.
 */
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AuditReport } from '@kube-provisioner/audit';
import type { ChaosTarget } from './chaos-targets.ts';
import { ClaimFleet, type FleetClaim, newClaim } from './claim-fleet.ts';
import { holdsWithin } from './holds-within.ts';
import { killLeader, killLeaderWhen, type LeaderFault } from './leader-faults.ts';
import type { PhaseContext } from './phase-context.ts';
import { settledAudit } from './settled-audit.ts';
import { readRecord, writeTree } from './volume-files.ts';

/** What the archive-expiry phase found. */
export interface ArchiveExpiryResult {
  readonly target: string;
  readonly expiring: number;
  readonly lasting: number;
  /** Claims not Bound, or whose archive or its record was not there once the PVs were gone. */
  readonly notArchived: readonly string[];
  /** Archives that vanished before their record's `expiresAt`, and control archives that vanished. */
  readonly removedEarly: readonly string[];
  /** Expired archives, or their records, still there at the end. */
  readonly leftOver: readonly string[];
  /** Control archives whose probe is missing or changed. */
  readonly dataLost: readonly string[];
  /** `expired archive removed` lines of the phase beyond one per expired archive. */
  readonly removedTwice: number;
  /** Expired archives still there when the sweeping leader was killed. */
  readonly leftAtKill: number;
  /** The kill that made a new leader sweep, and the kill of that leader mid-sweep. */
  readonly faults: readonly LeaderFault[];
  /** Whether the second kill struck once an archive had gone, rather than after waiting for it in vain. */
  readonly killedMidSweep: boolean;
  readonly audit: AuditReport | undefined;
}

/** Where and how the phase runs. */
export interface ArchiveExpiryOptions extends PhaseContext {
  readonly namespace: string;
  /** Claims of the expiring class; half as many (at least one) of the lasting class. */
  readonly claims: number;
  /** Files written into each expiring volume, so that removing the archives takes a while. */
  readonly filesPerVolume: number;
}

const probeFile = 'chaos-probe.txt';
const removedMessage = 'expired archive removed';

interface Archive {
  readonly claim: FleetClaim;
  readonly dir: string;
  expiresAt: number | undefined;
  vanishedAt: number | undefined;
}

/** Runs the phase on `options.target`, which must have {@link ChaosTarget.retention}. */
export async function runArchiveExpiryUnderKill(options: ArchiveExpiryOptions): Promise<ArchiveExpiryResult> {
  const { target } = options;
  const { retention } = target;
  if (retention === undefined) throw new Error(`${target.name} removes no expired archives`);
  const expiringClaims = Array.from({ length: options.claims }, (_, i) =>
    newClaim(`expire-${String(i).padStart(3, '0')}`, retention.expiringClass, { fate: 'archive' }),
  );
  const lastingClaims = Array.from({ length: Math.max(1, Math.ceil(options.claims / 2)) }, (_, i) =>
    newClaim(`last-${String(i).padStart(3, '0')}`, retention.lastingClass, { fate: 'archive' }),
  );
  const claims = [...expiringClaims, ...lastingClaims];
  const fleet = new ClaimFleet(options.kubeConfig, options.namespace, claims);
  await fleet.create(claims);
  await holdsWithin(
    async () => {
      await fleet.observe();
      return claims.every((claim) => claim.volumeName !== undefined);
    },
    options.waitMs,
    'every claim of the archive-expiry phase to be Bound',
  );
  const volumes = await fleet.volumes();
  const archives = new Map<string, Archive>();
  for (const claim of claims) {
    const pv = volumes.get(claim.volumeName ?? '');
    if (pv === undefined || claim.uid === undefined) continue;
    const dir = target.volumeDir(pv);
    await writeTree(dir, lastingClaims.includes(claim) ? 1 : options.filesPerVolume, claim.uid);
    await writeFile(join(dir, probeFile), claim.uid);
    archives.set(claim.name, {
      claim,
      dir: target.archivedDir(dir),
      expiresAt: undefined,
      vanishedAt: undefined,
    });
  }

  await fleet.delete(claims);
  const notArchived = claims.filter((claim) => !archives.has(claim.name)).map((claim) => claim.name);
  notArchived.push(...(await fleet.volumesLeft(claims, options.waitMs)).map((pv) => `PV ${pv} remains`));
  // Read at once: the shortest retention is longer than the deletes take, so every archive is here.
  for (const archive of archives.values()) {
    const record = await readRecord(archive.dir);
    if (record?.expiresAt === undefined) notArchived.push(`${archive.claim.name}: no archive record`);
    else archive.expiresAt = Date.parse(record.expiresAt);
  }
  const expiring = [...archives.values()].filter((archive) => expiringClaims.includes(archive.claim));
  const lasting = [...archives.values()].filter((archive) => lastingClaims.includes(archive.claim));

  const removedBefore = options.target.replicas.workLines().filter((line) => line.msg === removedMessage);
  const watch = watchVanishing(expiring);
  try {
    const lastExpiry = Math.max(...expiring.map((archive) => archive.expiresAt ?? 0));
    // Waiting for the archives to expire is the point of the phase, not a synchronisation.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, lastExpiry + 1000 - Date.now())));
    const [first, second] = await Promise.all([
      killLeader(target.replicas, options.lease, 'sweep'),
      killLeaderWhen(async () => expiring.some((archive) => archive.vanishedAt !== undefined), {
        replicas: target.replicas,
        lease: options.lease,
        phase: 'sweep',
        timeoutMs: options.waitMs,
      }),
    ]);
    const leftAtKill = expiring.filter((archive) => archive.vanishedAt === undefined).length;
    await holdsWithin(
      async () => expiring.every((archive) => archive.vanishedAt !== undefined),
      options.waitMs,
      'every expired archive to be removed',
    );
    return {
      ...(await judge(expiring, lasting, options, removedBefore.length)),
      notArchived,
      leftAtKill,
      faults: [first, second.fault],
      killedMidSweep: second.aimed,
      audit: await settledAudit(options.api, target),
    };
  } finally {
    watch.stop();
  }
}

/** Notes when each archive's directory is first seen gone, every 100 ms. */
function watchVanishing(archives: readonly Archive[]): { stop(): void } {
  const timer = setInterval(() => {
    const now = Date.now();
    for (const archive of archives)
      if (archive.vanishedAt === undefined && !existsSync(archive.dir)) archive.vanishedAt = now;
  }, 100);
  return { stop: () => clearInterval(timer) };
}

async function judge(
  expiring: readonly Archive[],
  lasting: readonly Archive[],
  options: ArchiveExpiryOptions,
  removedLinesBefore: number,
): Promise<
  Pick<
    ArchiveExpiryResult,
    'target' | 'expiring' | 'lasting' | 'removedEarly' | 'leftOver' | 'dataLost' | 'removedTwice'
  >
> {
  const removedEarly: string[] = [];
  const leftOver: string[] = [];
  const dataLost: string[] = [];
  for (const archive of expiring) {
    if (archive.vanishedAt === undefined) leftOver.push(`${archive.dir} remains`);
    else if (archive.expiresAt !== undefined && archive.vanishedAt < archive.expiresAt)
      removedEarly.push(
        `${archive.dir} gone at ${new Date(archive.vanishedAt).toISOString()}, expiring at ${new Date(archive.expiresAt).toISOString()}`,
      );
    if ((await readRecord(archive.dir)) !== undefined) leftOver.push(`${archive.dir}: its record remains`);
  }
  for (const archive of lasting) {
    if (!existsSync(archive.dir)) {
      removedEarly.push(`${archive.dir} (kept an hour) is gone`);
      continue;
    }
    const content = await readFile(join(archive.dir, probeFile), 'utf8').catch(() => undefined);
    if (content !== archive.claim.uid)
      dataLost.push(`${archive.dir}: probe ${content === undefined ? 'missing' : 'changed'}`);
  }
  const removedLines = options.target.replicas.workLines().filter((line) => line.msg === removedMessage);
  return {
    target: options.target.name,
    expiring: expiring.length,
    lasting: lasting.length,
    removedEarly,
    leftOver,
    dataLost,
    removedTwice: Math.max(0, removedLines.length - removedLinesBefore - expiring.length),
  };
}
