/**
 * The clone phase: source claims are bound and filled with thousands of files written straight into
 * their directories on the target's root (the host root or the export); clone claims (`dataSource` of kind PersistentVolumeClaim) are
 * created, and the leader is SIGKILLed as soon as a copy is seen in progress. Every clone must be
 * Bound with exactly its source's files and contents, no copy directory may be left, no source may
 * keep its cloning-protection finalizer, and the audit must be clean once every claim is gone.
 */
import type { AuditReport } from '@kube-provisioner/audit';
import { ClaimFleet, type FleetClaim, newClaim } from './claim-fleet.ts';
import { holdsWithin } from './holds-within.ts';
import { type AimedFault, killLeaderWhen } from './leader-faults.ts';
import type { PhaseContext } from './phase-context.ts';
import { settledAudit } from './settled-audit.ts';
import { clonesInProgress, digestDifferences, treeDigest, writeTree } from './volume-files.ts';

/** external-provisioner's finalizer on a claim being cloned. */
const cloningProtection = 'provisioner.storage.kubernetes.io/cloning-protection';

/** What the clone phase found. */
export interface CloneResult {
  readonly target: string;
  readonly clones: number;
  readonly filesPerSource: number;
  /** Sources and clones never Bound. */
  readonly notBound: readonly string[];
  /** Clones whose tree differs from their source's: `clone: path missing|extra|differs`, a few each. */
  readonly notIdentical: readonly string[];
  /** Copy directories left on the root once every clone was Bound. */
  readonly copiesLeft: readonly string[];
  /** Sources still carrying the cloning-protection finalizer once every clone was Bound. */
  readonly stillProtected: readonly string[];
  /** PVs of the phase left after its claims were deleted. */
  readonly lostDeletes: readonly string[];
  readonly kill: AimedFault | undefined;
  readonly audit: AuditReport | undefined;
}

/** Where and how the phase runs. */
export interface CloneOptions extends PhaseContext {
  readonly namespace: string;
  /** Clone claims, two per source. */
  readonly clones: number;
  readonly filesPerSource: number;
}

/** Runs the phase on `options.target`. */
export async function runCloneUnderKill(options: CloneOptions): Promise<CloneResult> {
  const { target } = options;
  const storageClass = target.classes.delete ?? '';
  const sources = Array.from({ length: Math.ceil(options.clones / 2) }, (_, i) =>
    newClaim(`source-${String(i).padStart(3, '0')}`, storageClass),
  );
  const clones = Array.from({ length: options.clones }, (_, i) =>
    newClaim(`clone-${String(i).padStart(3, '0')}`, storageClass, {
      cloneOf: sources[i % sources.length]?.name ?? '',
    }),
  );
  const fleet = new ClaimFleet(options.kubeConfig, options.namespace, [...sources, ...clones]);
  const allBound = (claims: readonly FleetClaim[]) => async () => {
    await fleet.observe();
    return claims.every((c) => c.volumeName !== undefined);
  };
  await fleet.create(sources);
  await holdsWithin(allBound(sources), options.waitMs, 'every source of the clone phase to be Bound');
  const dirs = new Map<string, string>();
  const volumes = await fleet.volumes();
  for (const source of sources) {
    const pv = volumes.get(source.volumeName ?? '');
    if (pv === undefined || source.uid === undefined) continue;
    dirs.set(source.name, target.volumeDir(pv));
    await writeTree(target.volumeDir(pv), options.filesPerSource, source.uid);
  }

  const [kill] = await Promise.all([
    killLeaderWhen(async () => (await clonesInProgress(target.root)).length > 0, {
      replicas: target.replicas,
      lease: options.lease,
      phase: 'clone',
      timeoutMs: options.waitMs,
    }),
    fleet.create(clones),
  ]);
  await holdsWithin(allBound(clones), options.waitMs, 'every clone to be Bound');

  const cloneVolumes = await fleet.volumes();
  const notIdentical: string[] = [];
  const digests = new Map<string, Map<string, string>>();
  for (const clone of clones) {
    const pv = cloneVolumes.get(clone.volumeName ?? '');
    const sourceDir = dirs.get(clone.cloneOf ?? '');
    if (pv === undefined || sourceDir === undefined) continue;
    const source = digests.get(sourceDir) ?? (await treeDigest(sourceDir));
    digests.set(sourceDir, source);
    const differences = digestDifferences(source, await treeDigest(target.volumeDir(pv)));
    notIdentical.push(...differences.slice(0, 5).map((difference) => `${clone.name}: ${difference}`));
  }
  const copiesLeft = await clonesInProgress(target.root);
  const protectedSources = async (): Promise<string[]> => {
    const live = await fleet.live();
    return sources
      .filter((source) => live.get(source.name)?.metadata?.finalizers?.includes(cloningProtection) === true)
      .map((source) => source.name);
  };
  // The finalizer goes in the clone's own provisioning call, which may end just after the binding.
  await holdsWithin(
    async () => (await protectedSources()).length === 0,
    options.waitMs,
    'the sources to lose their cloning-protection finalizer',
  );
  const stillProtected = await protectedSources();

  await fleet.delete([...clones, ...sources]);
  return {
    target: target.name,
    clones: clones.length,
    filesPerSource: options.filesPerSource,
    notBound: [...sources, ...clones].filter((c) => c.volumeName === undefined).map((c) => c.name),
    notIdentical,
    copiesLeft,
    stillProtected,
    lostDeletes: await fleet.volumesLeft([...sources, ...clones], options.waitMs),
    kill,
    audit: await settledAudit(options.api, target),
  };
}
