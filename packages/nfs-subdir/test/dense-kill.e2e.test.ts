/**
 * End-to-end: the `nfs-subdir-provisioner` bin SIGKILLed again and again while claims are
 * provisioned and deleted. Whatever moment a kill hits (between a temporary record and
 * its publish, between a record and its directory, in the middle of a delete), the end state must
 * be exact: one PV and one recorded directory per claim, then nothing at all on the export, not even
 * a temporary file.
 */
import { readdir, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import {
  createClaims,
  type NfsServer,
  type RunningProgram,
  startNfsServer,
  startProgram,
  waitFor,
  workspaceBinCommand,
} from '@kube-provisioner/testenv';
import {
  deploymentAccount,
  nfsToolsAvailable,
  uniqueName,
  useTestEnv,
} from '@kube-provisioner/testenv/testing';
import { CoordinationV1Api, CoreV1Api, StorageV1Api, type V1PersistentVolume } from '@kubernetes/client-node';
import { afterAll, describe, expect, it } from 'vitest';

const env = useTestEnv();
const packageDir = join(import.meta.dirname, '..');
const deployDir = join(packageDir, '..', '..', 'examples', 'nfs', 'deploy');
const command = workspaceBinCommand(packageDir, 'nfs-subdir-provisioner');
// Sized for CI (about half a minute with the restarts); raise it locally for a longer run.
const claimCount = 60;
// Claims are created (and deleted) this many at a time, with one kill per batch once the batch's
// work is under way: the number of kills is then the same however fast the provisioner works.
const batchSize = 6;

/** One provisioner at a time on one export, restarted after every kill. */
class KilledProvisioner {
  kills = 0;
  #program: RunningProgram | undefined;
  readonly #start: () => Promise<RunningProgram>;
  readonly #afterKill: () => Promise<void>;

  constructor(start: () => Promise<RunningProgram>, afterKill: () => Promise<void>) {
    this.#start = start;
    this.#afterKill = afterKill;
  }

  async start(): Promise<void> {
    this.#program = await this.#start();
  }

  /** SIGKILLs the provisioner's process group (no cleanup of any kind runs) and starts a new one. */
  async killAndRestart(): Promise<void> {
    const program = this.#program;
    if (program === undefined) throw new Error('not started');
    process.kill(-program.pid, 'SIGKILL');
    expect(await program.exited).toBeNull();
    this.kills++;
    await this.#afterKill();
    await this.start();
  }

  /**
   * Stops the current incarnation gracefully, once it has installed its signal handlers (its start
   * line): a restart just before the end of a phase may still be loading, and a SIGTERM then ends it
   * by the signal's default action, as it would any process.
   */
  async stop(): Promise<number | null> {
    const program = this.#program;
    if (program === undefined) return null;
    await program.waitForOutput(/"msg":"starting nfs-subdir-provisioner"/u);
    return program.stop();
  }

  /** The last lines of the current incarnation's output, for a failure message. */
  lastLines(): string {
    return (this.#program?.output() ?? '').split('\n').slice(-40).join('\n');
  }
}

/** Every entry of the export, relative paths, dot files included. */
async function exportTree(dir: string): Promise<string[]> {
  return (await readdir(dir, { recursive: true })).map(String).sort();
}

describe.skipIf(!nfsToolsAvailable())(
  'nfs-subdir-provisioner SIGKILLed while provisioning and deleting',
  () => {
    const core = env.kubeConfig.makeApiClient(CoreV1Api);
    const leases = env.kubeConfig.makeApiClient(CoordinationV1Api);
    let server: NfsServer | undefined;
    let provisioner: KilledProvisioner | undefined;

    afterAll(async () => {
      const code = await provisioner?.stop();
      await server?.stop();
      expect(code, `exit code of the graceful stop; last lines:\n${provisioner?.lastLines()}`).toBe(0);
    });

    it('ends exact: one recorded directory per claim, then an empty export without temporary files', async () => {
      const { namespace: leaseNamespace, kubeconfigPath } = await deploymentAccount(env, deployDir);
      const nfs = await startNfsServer({ exportPath: '/export' });
      server = nfs;
      const suffix = uniqueName('dense-kill');
      const provisionerName = `e2e.kube-provisioner.io/${suffix}`;
      const start = () =>
        startProgram({
          command: command.command,
          args: [...command.args, '--mount-root', nfs.exportDir],
          env: {
            PATH: process.env.PATH ?? '',
            NFS_SERVER: nfs.host,
            NFS_PATH: nfs.exportPath,
            PROVISIONER_NAME: provisionerName,
            POD_NAMESPACE: leaseNamespace,
            KUBECONFIG: kubeconfigPath,
            METRICS_PORT: '0',
          },
        });
      // A restarted pod waits out the dead leader's Lease (15 s); releasing it as an administrator would
      // keeps the run short without changing what the kill leaves on disk.
      const releaseLease = async () => {
        const list = await leases.listNamespacedLease({ namespace: leaseNamespace });
        for (const lease of list.items) {
          if (lease.metadata?.name?.includes(suffix)) {
            await leases.deleteNamespacedLease({ namespace: leaseNamespace, name: lease.metadata.name });
          }
        }
      };
      provisioner = new KilledProvisioner(start, releaseLease);
      await provisioner.start();

      const storageClassName = uniqueName('dense-kill');
      await env.kubeConfig.makeApiClient(StorageV1Api).createStorageClass({
        body: {
          metadata: { name: storageClassName },
          provisioner: provisionerName,
          parameters: { onDelete: 'delete' },
          reclaimPolicy: 'Delete',
        },
      });
      const namespace = await env.namespace('dense-kill');
      const names = Array.from({ length: claimCount }, (_, index) => `claim-${index}`);
      const ours = async (): Promise<V1PersistentVolume[]> =>
        (await core.listPersistentVolume()).items.filter(
          (pv) => pv.spec?.storageClassName === storageClassName,
        );

      // Provision under kills.
      await killPerBatch(
        provisioner,
        names,
        async () => (await ours()).length,
        (batch) => createClaims(env.kubeConfig, { namespace, storageClassName, names: batch }),
      );
      const bound = await waitFor(
        async () => {
          const claims = (await core.listNamespacedPersistentVolumeClaim({ namespace })).items;
          return claims.every((claim) => claim.status?.phase === 'Bound') ? claims : undefined;
        },
        { timeoutMs: 120_000, description: `all ${claimCount} claims to be Bound` },
      );

      const volumes = await ours();
      expect(volumes).toHaveLength(claimCount);
      const expected: string[] = [];
      for (const claim of bound) {
        const pvName = claim.spec?.volumeName ?? '';
        const dir = `${namespace}-${claim.metadata?.name}-${pvName}`;
        const pv = volumes.find((volume) => volume.metadata?.name === pvName);
        expect(pv?.spec?.nfs?.path).toBe(`/export/${dir}`);
        // A record is a symbolic link whose text is the record.
        const record = JSON.parse(await readlink(join(nfs.exportDir, `.${dir}.kube-provisioner.json`)));
        expect(record).toMatchObject({ claimUid: claim.metadata?.uid, pvName });
        expect(record.removingAt).toBeUndefined();
        expect(record.provisioner).toBe(provisionerName);
        expected.push(dir, `.${dir}.kube-provisioner.json`);
      }
      // Exact: nothing else, no temporary record file of any killed process.
      expect(await exportTree(nfs.exportDir)).toEqual(expected.sort());
      const provisionKills = provisioner.kills;

      // Delete under kills.
      await killPerBatch(
        provisioner,
        names,
        async () => claimCount - (await ours()).length,
        async (batch) => {
          await Promise.all(
            batch.map((name) => core.deleteNamespacedPersistentVolumeClaim({ namespace, name })),
          );
        },
      );
      await waitFor(async () => ((await ours()).length === 0 ? true : undefined), {
        timeoutMs: 120_000,
        description: 'every PV to be deleted',
      });

      expect(await exportTree(nfs.exportDir)).toEqual([]);
      const killsPerPhase = Math.ceil(claimCount / batchSize) - 1;
      expect(provisionKills).toBe(killsPerPhase);
      expect(provisioner.kills - provisionKills).toBe(killsPerPhase);
      console.info(`dense-kill: ${provisioner.kills} SIGKILLs over ${claimCount} claims`);
    }, 240_000);
  },
);

/**
 * Starts the work of `names` one batch of {@link batchSize} at a time. After each batch but the last,
 * it waits until `progress` (volumes done in this phase) has moved past where it stood when the batch
 * began, so work is under way, then kills and restarts the provisioner: the kill lands
 * among the batch's operations. The last batch is left to the final process, whose start-up sweep
 * then runs; the caller waits for the end state.
 */
async function killPerBatch(
  provisioner: KilledProvisioner,
  names: readonly string[],
  progress: () => Promise<number>,
  startBatch: (batch: string[]) => Promise<void>,
): Promise<void> {
  for (let first = 0; first < names.length; first += batchSize) {
    const before = await progress();
    await startBatch(names.slice(first, first + batchSize));
    if (first + batchSize >= names.length) return;
    await waitFor(async () => ((await progress()) > before ? true : undefined), {
      timeoutMs: 120_000,
      intervalMs: 50,
      description: `progress past ${before} volumes (batch from claim ${first})`,
    });
    await provisioner.killAndRestart();
  }
}
