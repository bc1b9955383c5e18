// biome-ignore-all lint/suspicious/noTemplateCurlyInString: pathPattern placeholders are literal text, not JS templates
/**
 * End-to-end: two replicas of a shipped CLI (`kube-hostpath-provisioner`, shared mode,
 * leader election with the default 15 s / 10 s / 2 s) under a burst of creates and deletes; the
 * leader is frozen with SIGSTOP for longer than the lease duration, the standby takes over, and the
 * leader is resumed. From the resumed replica's log and the Events it records (their source names
 * the replica), it must take no step of work after resuming unless it acquired the Lease afresh.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  applyManifests,
  createClaims,
  type RunningProgram,
  startProgram,
  waitFor,
  workspaceBinCommand,
} from '@kube-provisioner/testenv';
import { uniqueName, useTestEnv } from '@kube-provisioner/testenv/testing';
import {
  CoordinationV1Api,
  CoreV1Api,
  type KubernetesObject,
  loadAllYaml,
  StorageV1Api,
} from '@kubernetes/client-node';
import { afterAll, describe, expect, it } from 'vitest';

const env = useTestEnv();
const core = env.kubeConfig.makeApiClient(CoreV1Api);
const storage = env.kubeConfig.makeApiClient(StorageV1Api);
const coordination = env.kubeConfig.makeApiClient(CoordinationV1Api);
const repo = join(import.meta.dirname, '..', '..', '..');
const systemNamespace = 'kube-provisioner-hostpath';
/** Longer than the default lease duration (15 s). */
const pauseMs = 20_000;
/**
 * Log lines that mark a step of work taken: the provisioner's directory steps (fenced right before
 * they act) and recorded Events (fenced when recorded). Completions of API calls ("Persistentvolume
 * saved") are not counted: a request sent before the freeze may answer after it.
 */
const workMessages = new Set(['volume directory ready', 'volume directory removed', 'Event occurred']);
const isWork = (line: LogLine): boolean => workMessages.has(line.msg) && line.reason !== 'LeaderElection';

interface LogLine {
  readonly time: number;
  readonly msg: string;
  readonly reason?: string;
}

const replicas: RunningProgram[] = [];
let root = '';

afterAll(async () => {
  for (const replica of replicas) process.kill(replica.pid, 'SIGCONT');
  await Promise.all(replicas.map((replica) => replica.stop()));
  if (root) await rm(root, { recursive: true, force: true });
});

function parse(output: string): LogLine[] {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine);
}

async function startReplica(provisionerName: string, kubeconfigPath: string): Promise<RunningProgram> {
  const cli = workspaceBinCommand(join(repo, 'packages', 'hostpath'), 'kube-hostpath-provisioner');
  const replica = await startProgram({
    command: cli.command,
    args: [
      ...cli.args,
      '--mode',
      'shared',
      '--provisioner-name',
      provisionerName,
      '--root',
      root,
      '--v',
      '4',
    ],
    env: {
      PATH: process.env.PATH ?? '',
      KUBECONFIG: kubeconfigPath,
      HEALTH_PORT: '0',
      POD_NAMESPACE: systemNamespace,
    },
  });
  replicas.push(replica);
  return replica;
}

async function boundCount(namespace: string): Promise<number> {
  const claims = await core.listNamespacedPersistentVolumeClaim({ namespace });
  return claims.items.filter((claim) => claim.status?.phase === 'Bound').length;
}

describe('a leader frozen for longer than the lease duration', () => {
  it('does no work after it resumes unless it acquires the Lease afresh', { timeout: 300_000 }, async () => {
    const rbac = await readFile(join(repo, 'packages', 'hostpath', 'deploy', 'rbac.yaml'), 'utf8');
    await applyManifests(env.kubeConfig, loadAllYaml(rbac) as KubernetesObject[]);
    const account = await env.serviceAccountKubeconfig({
      namespace: systemNamespace,
      name: 'hostpath-provisioner',
    });
    root = await mkdtemp(join(tmpdir(), 'leader-pause-'));
    const provisionerName = `e2e.kube-provisioner.io/${uniqueName('pause')}`;
    const storageClassName = uniqueName('pause');
    await storage.createStorageClass({
      body: {
        metadata: { name: storageClassName },
        provisioner: provisionerName,
        reclaimPolicy: 'Delete',
        volumeBindingMode: 'Immediate',
        parameters: { pathPattern: '${.PVC.namespace}/${.PVC.name}' },
      },
    });
    const namespace = await env.namespace('pause');

    const first = await startReplica(provisionerName, account.kubeconfigPath);
    await first.waitForOutput(/Started provisioner controller/u, 90_000);
    const second = await startReplica(provisionerName, account.kubeconfigPath);
    await second.waitForOutput(/Attempting to acquire leader lease/u, 90_000);

    // A burst: 20 claims bound, then 20 more created while the first ones are deleted.
    const wave1 = Array.from({ length: 20 }, (_, i) => `a-${i}`);
    const wave2 = Array.from({ length: 20 }, (_, i) => `b-${i}`);
    await createClaims(env.kubeConfig, { namespace, storageClassName, names: wave1 });
    await waitFor(async () => (await boundCount(namespace)) >= 20 || undefined, {
      timeoutMs: 120_000,
      description: 'the first wave to be bound',
    });
    const deleting = Promise.all(
      wave1.map((name) => core.deleteNamespacedPersistentVolumeClaim({ namespace, name })),
    );
    const creating = createClaims(env.kubeConfig, { namespace, storageClassName, names: wave2 });
    // Freeze the leader in the middle of the deletes.
    await first.waitForOutput(/volume directory removed/u, 60_000);

    process.kill(first.pid, 'SIGSTOP');
    const pausedAt = Date.now();
    await Promise.all([deleting, creating]);
    // The standby takes over while the leader is frozen (however long a loaded machine makes that):
    // the Lease names it before the resume, and the freeze lasts at least `pauseMs` in any case.
    await second.waitForOutput(/Successfully acquired lease/u, 90_000);
    const [firstIdentity, secondIdentity] = [first, second].map(
      (replica) => /"identity":"([^"]+)"/u.exec(replica.output())?.[1] ?? '',
    );
    const leaseName = /"lease":"[^/"]+\/([^"]+)"/u.exec(first.output())?.[1] ?? '';
    const takenOver = await coordination.readNamespacedLease({ namespace: systemNamespace, name: leaseName });
    expect(takenOver.spec?.holderIdentity).toBe(secondIdentity);
    const remaining = pausedAt + pauseMs - Date.now();
    if (remaining > 0) await new Promise((resolve) => setTimeout(resolve, remaining));
    process.kill(first.pid, 'SIGCONT');

    // The new leader finishes the burst: wave 2 bound, wave 1's volumes gone.
    await waitFor(
      async () => {
        const claims = await core.listNamespacedPersistentVolumeClaim({ namespace });
        const volumes = await core.listPersistentVolume();
        const ours = volumes.items.filter((pv) => pv.spec?.storageClassName === storageClassName);
        return claims.items.length === 20 && (await boundCount(namespace)) === 20 && ours.length === 20
          ? true
          : undefined;
      },
      { timeoutMs: 120_000, description: 'the burst to finish on the new leader' },
    );
    await first.waitForOutput(/Lost the lease; stopped all work, campaigning again/u, 30_000);

    const afterResume = parse(first.output()).filter((line) => line.time > pausedAt);
    const reacquired = afterResume.findIndex((line) => line.msg === 'Successfully acquired lease');
    const beforeReacquire = reacquired === -1 ? afterResume : afterResume.slice(0, reacquired);
    expect(beforeReacquire.filter(isWork)).toEqual([]);

    // The Events the resumed replica recorded after resuming: none about claims or volumes.
    const events = await core.listNamespacedEvent({ namespace });
    const late = events.items.filter(
      (event) =>
        (event.source?.component ?? event.reportingComponent ?? '').endsWith(firstIdentity ?? '-') &&
        new Date(event.firstTimestamp ?? 0).getTime() > pausedAt + 1_000,
    );
    if (reacquired === -1) expect(late.map((event) => event.reason)).toEqual([]);
    expect(takenOver.spec?.leaseTransitions).toBeGreaterThanOrEqual(1);
  });
});
