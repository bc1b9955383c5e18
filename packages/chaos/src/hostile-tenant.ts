/**
 * The hostile-tenant phase: a tenant who may create claims and write in its own volumes attacks the
 * operations that walk, copy and clean up trees. Its source volumes change under their clones (a
 * large file truncated and written again, a directory widened, a chain deepened, two directories
 * swapped) while the leader is SIGKILLed in the middle of a copy; other clones of its aim at
 * unrecorded data (an upstream-era directory, through a class rendering the claim's annotation), which
 * must be refused and left as found. Nothing of another claim may change, no copy directory may stay,
 * the provisioner's memory stays under the manifests' 384Mi limit, a claim made after the attack is
 * provisioned (no file-system call was left hanging), and the audit is clean once every claim is gone.
 */
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { AuditReport } from '@kube-provisioner/audit';
import { ClaimFleet, type FleetClaim, newClaim } from './claim-fleet.ts';
import { holdsWithin } from './holds-within.ts';
import { type AimedFault, killLeaderWhen } from './leader-faults.ts';
import { sampleRss } from './peak-rss.ts';
import type { PhaseContext } from './phase-context.ts';
import type { SeededRandom } from './seeded-random.ts';
import { settledAudit } from './settled-audit.ts';
import {
  type MutationCounts,
  prepareTenantTree,
  startTenantMutations,
  type TenantTreeLimits,
} from './tenant-mutations.ts';
import { clonesInProgress, digestDifferences, treeDigest, writeTree } from './volume-files.ts';

/** What the hostile-tenant phase found. */
export interface HostileTenantResult {
  readonly target: string;
  readonly clones: number;
  readonly mutations: MutationCounts;
  /** Volumes of other claims, or unrecorded directories, whose data changed: `name: difference`. */
  readonly othersChanged: readonly string[];
  /** Clones aimed at unrecorded data that got a volume. */
  readonly refusedBound: readonly string[];
  /** Sources, clones of changing sources, and the claim made after the attack, never Bound. */
  readonly notBound: readonly string[];
  /** Copy directories left on the root once every clone was Bound. */
  readonly copiesLeft: readonly string[];
  /** The highest resident memory of one replica during the attack, MiB. */
  readonly peakRssMiB: number;
  /** PVs of the phase left after its claims were deleted. */
  readonly lostDeletes: readonly string[];
  readonly kill: AimedFault | undefined;
  readonly audit: AuditReport | undefined;
}

/** Where and how the phase runs. */
export interface HostileTenantOptions extends PhaseContext {
  /** The tenant's namespace. */
  readonly namespace: string;
  /** Another tenant's namespace, whose volumes must not change. */
  readonly victimNamespace: string;
  readonly random: SeededRandom;
  /** Clones of changing sources, two per source. */
  readonly clones: number;
  readonly limits: TenantTreeLimits;
}

const victimFiles = 200;
const unrecordedDirs = ['upstream-era-0', 'upstream-era-1'];

/** Runs the phase on `options.target`. */
export async function runHostileTenant(options: HostileTenantOptions): Promise<HostileTenantResult> {
  const { target } = options;
  const byPath = target.nestedClass;
  const victims = [0, 1].map((i) => newClaim(`victim-${i}`, target.classes.delete ?? ''));
  const sources = Array.from({ length: Math.ceil(options.clones / 2) }, (_, i) =>
    newClaim(`source-${i}`, byPath, { annotations: { path: `tenant-source-${i}` } }),
  );
  const clones = Array.from({ length: options.clones }, (_, i) =>
    newClaim(`clone-${i}`, byPath, {
      annotations: { path: `tenant-copy-${i}` },
      cloneOf: sources[i % sources.length]?.name ?? '',
    }),
  );
  const aimedAtOthers = unrecordedDirs.map((path, i) =>
    newClaim(`aimed-${i}`, byPath, { annotations: { path }, cloneOf: sources[0]?.name ?? '' }),
  );
  const after = newClaim('after-the-attack', target.classes.delete ?? '');
  const victimFleet = new ClaimFleet(options.kubeConfig, options.victimNamespace, victims);
  const fleet = new ClaimFleet(options.kubeConfig, options.namespace, [
    ...sources,
    ...clones,
    ...aimedAtOthers,
    after,
  ]);
  const bound = (f: ClaimFleet, claims: readonly FleetClaim[]) => async () => {
    await f.observe();
    return claims.every((c) => c.volumeName !== undefined);
  };

  // Data the tenant must not reach: another namespace's volumes and upstream-era directories.
  await Promise.all([victimFleet.create(victims), fleet.create(sources)]);
  await holdsWithin(bound(victimFleet, victims), options.waitMs, 'the victims to be Bound');
  await holdsWithin(bound(fleet, sources), options.waitMs, 'the tenant sources to be Bound');
  const volumes = await fleet.volumes();
  const dirOf = (claim: FleetClaim) => {
    const pv = volumes.get(claim.volumeName ?? '');
    return pv === undefined ? undefined : target.volumeDir(pv);
  };
  const others = new Map<string, string>();
  for (const victim of victims) {
    const dir = dirOf(victim);
    if (dir === undefined) continue;
    await writeTree(dir, victimFiles, victim.uid ?? victim.name);
    others.set(`${options.victimNamespace}/${victim.name}`, dir);
  }
  for (const name of unrecordedDirs) {
    const dir = join(target.root, name);
    await mkdir(dir);
    await writeTree(dir, victimFiles, name);
    others.set(name, dir);
  }
  const before = new Map<string, Map<string, string>>();
  for (const [name, dir] of others) before.set(name, await treeDigest(dir));
  const sourceDirs = sources.flatMap((source) => dirOf(source) ?? []);
  for (const dir of sourceDirs) await prepareTenantTree(dir, options.limits);

  const mutations = startTenantMutations(sourceDirs, options.limits, options.random);
  const rss = sampleRss(target.replicas);
  const [kill] = await Promise.all([
    killLeaderWhen(async () => (await clonesInProgress(target.root)).length > 0, {
      replicas: target.replicas,
      lease: options.lease,
      phase: 'hostile-tenant',
      timeoutMs: options.waitMs,
    }),
    fleet.create([...clones, ...aimedAtOthers]),
  ]);
  // The tenant keeps changing its trees while they are copied, for at most half the allowance.
  await holdsWithin(bound(fleet, clones), options.waitMs / 2, 'the clones to be Bound under attack');
  const counts = await mutations.stop();
  await holdsWithin(bound(fleet, clones), options.waitMs, 'the clones to be Bound');
  const peakRssMiB = rss.stop();
  await fleet.create([after]);
  await holdsWithin(bound(fleet, [after]), options.waitMs, 'a claim made after the attack to be Bound');

  await fleet.observe();
  const othersChanged: string[] = [];
  for (const [name, dir] of others) {
    const differences = digestDifferences(before.get(name) ?? new Map(), await treeDigest(dir));
    othersChanged.push(...differences.slice(0, 5).map((difference) => `${name}: ${difference}`));
  }
  const copiesLeft = await clonesInProgress(target.root);
  const refusedBound = aimedAtOthers.filter((c) => c.volumeName !== undefined).map((c) => c.name);
  const notBound = [...sources, ...clones, after]
    .filter((c) => c.volumeName === undefined)
    .map((c) => c.name);

  const mine = [...sources, ...clones, ...aimedAtOthers, after];
  await Promise.all([fleet.delete(mine), victimFleet.delete(victims)]);
  const lostDeletes = [
    ...(await fleet.volumesLeft(mine, options.waitMs)),
    ...(await victimFleet.volumesLeft(victims, options.waitMs)),
  ];
  // The upstream-era directories are the phase's own: an audit would report them as orphans.
  for (const name of unrecordedDirs) await rm(join(target.root, name), { recursive: true, force: true });
  return {
    target: target.name,
    clones: clones.length,
    mutations: counts,
    othersChanged,
    refusedBound,
    notBound,
    copiesLeft,
    peakRssMiB,
    lostDeletes,
    kill,
    audit: await settledAudit(options.api, target),
  };
}
