/**
 * The chaos suite: two leader-elected replicas of kube-hostpath-provisioner (shared mode) and of
 * nfs-subdir-provisioner (over nfs-ganesha), side by side on the real control plane. Claims are
 * created in waves with the leader SIGKILLed at a random point of each but the last, which SIGSTOPs
 * it for longer than the lease, while kube-apiserver is restarted, etcd compacted and
 * kube-controller-manager restarted; then every claim is deleted under more SIGKILLs and another
 * SIGSTOP; and pairs of claims rendering `P` and `P/…` are created at once and the outer ones deleted;
 * claims grow under a kill; data is taken back and claims cloned on both, and expired archives
 * swept on nfs-subdir, with the leader killed in the middle. The oracle: the orphan audit, every claim
 * Bound exactly once, no data lost, no delete lost, and no work outside the Lease holder's tenure.
 * The seed is printed; `npm run chaos -- --claims N --seed S` replays a run at any size.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createKubeApi } from '@kube-provisioner/controller';
import { findOverlaps } from '@kube-provisioner/controller/testing';
import { annDynamicallyProvisioned } from '@kube-provisioner/controller/wire-names';
import { nfsToolsAvailable, uniqueName, useTestEnv } from '@kube-provisioner/testenv/testing';
import { CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import { type ArchiveExpiryResult, runArchiveExpiryUnderKill } from '../src/archive-expiry-under-kill.ts';
import { chaosPlanFromEnv, chaosTimeoutMs } from '../src/chaos-plan.ts';
import { formatChaosReport, type LifecycleResults } from '../src/chaos-report.ts';
import { ChaosScenario, type ScenarioResult } from '../src/chaos-scenario.ts';
import { type ChaosTarget, startHostPathTarget, startNfsSubdirTarget } from '../src/chaos-targets.ts';
import { type CloneResult, runCloneUnderKill } from '../src/clone-under-kill.ts';
import { runClusterFaults } from '../src/cluster-faults.ts';
import { type HostileTenantResult, runHostileTenant } from '../src/hostile-tenant.ts';
import { type LeaseTracker, trackLease } from '../src/lease-tracker.ts';
import { type NestedRendersResult, runNestedRenders } from '../src/nested-renders.ts';
import { type ResizeResult, runResizeUnderKill } from '../src/resize-under-kill.ts';
import { seededRandom } from '../src/seeded-random.ts';
import { runSnapshotUnderKill, type SnapshotResult } from '../src/snapshot-under-kill.ts';
import { runTakeBackUnderKill, type TakeBackResult } from '../src/take-back-under-kill.ts';

const env = useTestEnv();
const plan = chaosPlanFromEnv(process.env);
const targets: ChaosTarget[] = [];
const leases: LeaseTracker[] = [];
const dirs: string[] = [];
const api = createKubeApi(env.kubeConfig);

async function tempDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

afterAll(async () => {
  for (const lease of leases) lease.stop();
  await Promise.all(targets.map((target) => target.stop()));
  // Retained hostpath PVs stay by design; no provisioner is left to remove their finalizer.
  const core = env.kubeConfig.makeApiClient(CoreV1Api);
  const names = new Set(targets.map((target) => target.provisionerName));
  const volumes = await core.listPersistentVolume();
  for (const pv of volumes.items) {
    const name = pv.metadata?.name ?? '';
    if (!names.has(pv.metadata?.annotations?.[annDynamicallyProvisioned] ?? '')) continue;
    await core.patchPersistentVolume(
      { name, body: { metadata: { finalizers: null } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await core.deletePersistentVolume({ name }).catch(() => undefined);
  }
  await api.close();
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

function expectSound(result: ScenarioResult): void {
  const { target } = result;
  expect
    .soft(
      result.faults.filter((f) => f.signal === 'SIGKILL' && f.phase === 'create').length,
      `${target} kills while creating`,
    )
    .toBe(plan.createWaves - 1);
  expect
    .soft(
      result.faults.filter((f) => f.signal === 'SIGKILL' && f.phase === 'delete').length,
      `${target} kills while deleting`,
    )
    .toBe(plan.deleteWaves - 1);
  expect
    .soft(
      result.faults.filter((f) => f.signal === 'SIGSTOP').map((f) => f.phase),
      `${target} pauses`,
    )
    .toEqual(['create', 'delete']);
  expect
    .soft(
      result.faults.filter((f) => f.recoveryMs === undefined),
      `${target} faults without recovery`,
    )
    .toEqual([]);
  expect.soft(result.notBound, `${target} claims never Bound`).toEqual([]);
  expect.soft(result.rebound, `${target} claims bound twice`).toEqual([]);
  expect.soft(result.dataLost, `${target} data lost`).toEqual([]);
  expect.soft(result.lostDeletes, `${target} lost deletes`).toEqual([]);
  expect.soft(result.auditAfterCreate?.findings, `${target} audit after create`).toEqual([]);
  expect.soft(result.auditAfterDelete?.findings, `${target} audit after delete`).toEqual([]);
  expect.soft(result.overlaps.length, `${target} work lines outside the replica's lease tenure`).toBe(0);
  expect
    .soft(result.tenures.length, `${target} lease tenures`)
    .toBeGreaterThan(plan.createWaves + plan.deleteWaves);
}

function expectResized(result: ResizeResult): void {
  const { target } = result;
  expect.soft(result.notBound, `${target} resize claims not bound`).toEqual([]);
  expect.soft(result.notResized, `${target} claims not at the new size`).toEqual([]);
  expect.soft(result.leftInProgress, `${target} claims left with a resize in progress`).toEqual([]);
  expect.soft(result.lostDeletes, `${target} resize PVs left`).toEqual([]);
  expect.soft(result.fault?.recoveryMs, `${target} resize kill without recovery`).toBeDefined();
  expect.soft(result.audit?.findings, `${target} audit after the resizes`).toEqual([]);
}

function expectNoNesting(result: NestedRendersResult): void {
  const { target } = result;
  expect.soft(result.bothBound, `${target} nested pairs where both claims got a volume`).toEqual([]);
  expect.soft(result.nested, `${target} volumes inside another volume`).toEqual([]);
  expect.soft(result.dataLost, `${target} inner data lost to an outer delete`).toEqual([]);
  expect.soft(result.neitherBound, `${target} nested pairs where neither claim got a volume`).toEqual([]);
  expect.soft(result.lostDeletes, `${target} nested-render PVs left`).toEqual([]);
  expect.soft(result.faults.length, `${target} nested-render kills`).toBe(2);
  expect
    .soft(
      result.faults.filter((fault) => fault.recoveryMs === undefined),
      `${target} nested-render kills without recovery`,
    )
    .toEqual([]);
  expect.soft(result.audit?.findings, `${target} audit after the nested renders`).toEqual([]);
}

function expectExpiredOnce(result: ArchiveExpiryResult): void {
  const { target } = result;
  expect.soft(result.notArchived, `${target} expiry claims not archived`).toEqual([]);
  expect.soft(result.removedEarly, `${target} archives removed before their time`).toEqual([]);
  expect.soft(result.leftOver, `${target} expired archives left`).toEqual([]);
  expect.soft(result.dataLost, `${target} kept archives changed`).toEqual([]);
  expect.soft(result.removedTwice, `${target} archive removals beyond one each`).toBe(0);
  expect
    .soft(
      result.faults.filter((fault) => fault.recoveryMs === undefined),
      `${target} sweep kills without recovery`,
    )
    .toEqual([]);
  expect.soft(result.audit?.findings, `${target} audit after the archive expiry`).toEqual([]);
}

function expectTakenBack(result: TakeBackResult): void {
  const { target } = result;
  expect.soft(result.notBound, `${target} take-back claims not bound`).toEqual([]);
  expect.soft(result.dataMissing, `${target} takers without the old data`).toEqual([]);
  expect.soft(result.notInOnePlace, `${target} taken-back data not in exactly one place`).toEqual([]);
  expect.soft(result.rivalsBound, `${target} rivals for the same data that got it`).toBe(1);
  expect.soft(result.lostDeletes, `${target} take-back PVs left`).toEqual([]);
  expect.soft(result.fault?.recoveryMs, `${target} take-back kill without recovery`).toBeDefined();
  expect.soft(result.auditBound?.findings, `${target} audit with the takers bound`).toEqual([]);
  expect.soft(result.audit?.findings, `${target} audit after the take-backs`).toEqual([]);
}

function expectCloned(result: CloneResult): void {
  const { target } = result;
  expect.soft(result.notBound, `${target} clone-phase claims not bound`).toEqual([]);
  expect.soft(result.notIdentical, `${target} clones unlike their source`).toEqual([]);
  expect.soft(result.copiesLeft, `${target} copy directories left`).toEqual([]);
  expect.soft(result.stillProtected, `${target} sources still protected`).toEqual([]);
  expect.soft(result.lostDeletes, `${target} clone-phase PVs left`).toEqual([]);
  expect.soft(result.kill?.fault.recoveryMs, `${target} clone kill without recovery`).toBeDefined();
  expect.soft(result.audit?.findings, `${target} audit after the clones`).toEqual([]);
}

function expectSnapshotted(result: SnapshotResult): void {
  const { target } = result;
  expect.soft(result.notBound, `${target} snapshot-phase claims not bound`).toEqual([]);
  expect.soft(result.notReady, `${target} snapshots never ready`).toEqual([]);
  expect.soft(result.snapshotKill?.aimed, `${target} snapshot kill landed mid-copy`).toBe(true);
  expect.soft(result.cutCopies.length, `${target} snapshot copies the kill cut short`).toBeGreaterThan(0);
  expect
    .soft(result.notFinishedAfterKill, `${target} cut snapshots not finished by a later leader`)
    .toEqual([]);
  expect.soft(result.restoreKill?.aimed, `${target} restore kill landed mid-copy`).toBe(true);
  expect.soft(result.notIdentical, `${target} snapshots and restores unlike their source`).toEqual([]);
  expect.soft(result.leftInArea, `${target} leftovers in the snapshot area`).toEqual([]);
  expect.soft(result.copiesLeft, `${target} restore copy directories left`).toEqual([]);
  expect.soft(result.stillProtected, `${target} snapshots still protected`).toEqual([]);
  expect.soft(result.notListed, `${target} snapshots the audit lists wrongly`).toEqual([]);
  expect.soft(result.dataLeft, `${target} deleted snapshots' data left`).toEqual([]);
  expect.soft(result.lostDeletes, `${target} snapshot-phase PVs left`).toEqual([]);
  expect
    .soft(result.snapshotKill?.fault.recoveryMs, `${target} snapshot kill without recovery`)
    .toBeDefined();
  expect.soft(result.restoreKill?.fault.recoveryMs, `${target} restore kill without recovery`).toBeDefined();
  expect.soft(result.auditReady?.findings, `${target} audit with the snapshots ready`).toEqual([]);
  expect.soft(result.audit?.findings, `${target} audit after the snapshots`).toEqual([]);
}

/** The shipped manifests' memory limit for the provisioner (Deployment and DaemonSet). */
const memoryLimitMiB = 384;

function expectWithstood(result: HostileTenantResult): void {
  const { target } = result;
  expect
    .soft(result.othersChanged, `${target} data of others changed by the tenant's operations`)
    .toEqual([]);
  expect.soft(result.refusedBound, `${target} clones into unrecorded data provisioned`).toEqual([]);
  expect.soft(result.notBound, `${target} hostile-tenant claims not bound`).toEqual([]);
  expect
    .soft(result.copiesLeft, `${target} copy directories left by the hostile tenant's clones`)
    .toEqual([]);
  expect
    .soft(result.peakRssMiB, `${target} peak RSS under the hostile tenant, MiB`)
    .toBeLessThan(memoryLimitMiB);
  expect.soft(result.lostDeletes, `${target} hostile-tenant PVs left`).toEqual([]);
  expect.soft(result.kill?.fault.recoveryMs, `${target} hostile-tenant kill without recovery`).toBeDefined();
  expect.soft(result.audit?.findings, `${target} audit after the hostile tenant`).toEqual([]);
}

/**
 * The data-lifecycle phases on one target, one after another: each kills the leader its own way.
 * Archive expiry runs where the target removes expired archives (nfs-subdir); snapshots where it
 * takes them (hostpath).
 */
async function runLifecycle(
  target: ChaosTarget,
  lease: LeaseTracker,
  seed: number,
): Promise<LifecycleResults> {
  // Larger runs copy and sweep more: the allowance grows with the claims, as the scenario's does.
  const common = { target, lease, api, kubeConfig: env.kubeConfig, waitMs: 180_000 + plan.claims * 200 };
  const expiry =
    target.retention === undefined
      ? undefined
      : await runArchiveExpiryUnderKill({
          ...common,
          namespace: await env.namespace(`expiry-${target.name}`),
          claims: plan.sweepClaims,
          filesPerVolume: plan.sweepFiles,
        });
  const takeBack = await runTakeBackUnderKill({
    ...common,
    random: seededRandom(seed),
    namespace: await env.namespace(`take-back-${target.name}`),
    claims: plan.takeBackClaims,
    maxKillDelayMs: plan.maxKillDelayMs,
  });
  const clone = await runCloneUnderKill({
    ...common,
    namespace: await env.namespace(`clone-${target.name}`),
    clones: plan.cloneClaims,
    filesPerSource: plan.cloneFiles,
  });
  const snapshot = target.snapshots
    ? await runSnapshotUnderKill({
        ...common,
        namespace: await env.namespace(`snapshot-${target.name}`),
        snapshots: plan.snapshots,
        filesPerSource: plan.snapshotFiles,
      })
    : undefined;
  const hostile = await runHostileTenant({
    ...common,
    namespace: await env.namespace(`hostile-${target.name}`),
    victimNamespace: await env.namespace(`victim-${target.name}`),
    random: seededRandom(seed + 1),
    clones: plan.hostileClones,
    limits: plan.hostileTrees,
  });
  return { target: target.name, expiry, takeBack, clone, snapshot, hostile };
}

describe.skipIf(!nfsToolsAvailable())('chaos', () => {
  it(
    `${plan.claims} claims per provisioner survive leader kills, pauses and control-plane restarts`,
    async () => {
      console.log(
        `chaos seed ${plan.seed}: replay with npm run chaos -- --claims ${plan.claims} --seed ${plan.seed}`,
      );
      const controlPlane = await env.controlPlane();
      const runId = uniqueName('chaos');
      const logDir = await mkdtemp(join(tmpdir(), 'chaos-logs-'));
      // Kept after a failure, for reading; after a pass removed with the roots, once `afterAll` has
      // stopped the replicas that write to it.
      onTestFinished(({ task }) => {
        if (task.result?.state === 'pass') dirs.push(logDir);
      });
      console.log(`chaos: replica logs in ${logDir}`);
      targets.push(
        await startHostPathTarget({ env, runId, logDir, root: await tempDir('chaos-hostpath-') }),
        await startNfsSubdirTarget({ env, runId, logDir, root: await tempDir('chaos-nfs-') }),
      );
      const scenarios = await Promise.all(
        targets.map(async (target, index) => {
          const lease = trackLease(env.kubeConfig, target.leaseNamespace, target.leaseName);
          leases.push(lease);
          return new ChaosScenario({
            target,
            namespace: await env.namespace(`chaos-${target.name}`),
            lease,
            random: seededRandom(plan.seed + index + 1),
            plan,
            api,
            kubeConfig: env.kubeConfig,
          });
        }),
      );

      const [clusterFaults] = await Promise.all([
        runClusterFaults(controlPlane, seededRandom(plan.seed), 10_000, 30_000),
        ...scenarios.map((scenario) => scenario.createPhase()),
      ]);
      await Promise.all(scenarios.map((scenario) => scenario.deletePhase()));
      const results = scenarios.map((scenario) => scenario.result());
      // Claims rendering `P` and `P/…` in two namespaces at once, then the outer ones deleted.
      const nested = await Promise.all(
        targets.map(async (target, index) =>
          runNestedRenders({
            target,
            lease: leases[index] as LeaseTracker,
            random: seededRandom(plan.seed + targets.length + index + 1),
            api,
            kubeConfig: env.kubeConfig,
            namespaces: [
              await env.namespace(`nested-outer-${target.name}`),
              await env.namespace(`nested-inner-${target.name}`),
            ],
            pairs: plan.nestedPairs,
            maxKillDelayMs: plan.maxKillDelayMs,
            waitMs: 180_000,
          }),
        ),
      );
      // Claims of every target grow at once while the leader is killed.
      const resizes = await Promise.all(
        targets.map(async (target, index) =>
          runResizeUnderKill({
            target,
            lease: leases[index] as LeaseTracker,
            random: seededRandom(plan.seed + 2 * targets.length + index + 1),
            api,
            kubeConfig: env.kubeConfig,
            namespace: await env.namespace(`resize-${target.name}`),
            claims: plan.resizeClaims,
            maxKillDelayMs: plan.maxKillDelayMs,
            waitMs: 180_000,
          }),
        ),
      );
      // Side by side: hostpath's take-back and clones run while nfs-subdir sweeps its archives first.
      const lifecycles = await Promise.all(
        targets.map((target, index) =>
          runLifecycle(target, leases[index] as LeaseTracker, plan.seed + 3 * targets.length + index + 1),
        ),
      );
      console.log(formatChaosReport(plan, clusterFaults, results, nested, resizes, lifecycles));

      expect(clusterFaults.map((fault) => fault.fault)).toEqual([
        'restart kube-apiserver',
        'compact etcd',
        'restart kube-controller-manager',
      ]);
      for (const result of results) expectSound(result);
      for (const result of nested) expectNoNesting(result);
      expect(resizes.map((result) => result.target)).toEqual(['hostpath', 'nfs-subdir']);
      for (const result of resizes) expectResized(result);
      expect(lifecycles.filter((lifecycle) => lifecycle.expiry !== undefined).map((l) => l.target)).toEqual([
        'nfs-subdir',
      ]);
      expect(lifecycles.filter((lifecycle) => lifecycle.snapshot !== undefined).map((l) => l.target)).toEqual(
        ['hostpath'],
      );
      for (const lifecycle of lifecycles) {
        if (lifecycle.expiry !== undefined) expectExpiredOnce(lifecycle.expiry);
        expectTakenBack(lifecycle.takeBack);
        expectCloned(lifecycle.clone);
        if (lifecycle.snapshot !== undefined) expectSnapshotted(lifecycle.snapshot);
        expectWithstood(lifecycle.hostile);
      }
      // Every phase since the scenario's own count: removals of expired archives, take-backs and clones.
      for (const [index, target] of targets.entries())
        expect
          .soft(
            findOverlaps((leases[index] as LeaseTracker).tenures(), target.replicas.workLines()).length,
            `${target.name} work lines outside the lease tenure over the whole run`,
          )
          .toBe(0);
      const nfs = results.find((result) => result.target === 'nfs-subdir');
      expect(nfs?.auditAfterDelete?.summary).toMatchObject({
        archived: Math.ceil(plan.claims / 10),
        retained: Math.ceil((plan.claims - 1) / 10),
      });
    },
    chaosTimeoutMs(plan),
  );
});
