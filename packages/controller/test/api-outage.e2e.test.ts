/**
 * End-to-end: nothing the project ships exits because the API server is away. The
 * README example and the three shipped CLIs run as child processes with no HTTP server open
 * (`metricsServer` unset / `METRICS_PORT=0` / `HEALTH_PORT=0`), so only what the controller holds keeps
 * them alive; kube-apiserver is stopped for 60 s, a second README example is started while it is
 * down, and after the restart every provisioner binds a new claim and every process is still running.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  applyManifests,
  bindClaim,
  type RunningProgram,
  startProgram,
  workspaceBinCommand,
} from '@kube-provisioner/testenv';
import {
  nfsToolsAvailable,
  uniqueName,
  useNfsProvisioners,
  useTestEnv,
} from '@kube-provisioner/testenv/testing';
import { type KubernetesObject, loadAllYaml, StorageV1Api } from '@kubernetes/client-node';
import { afterAll, describe, expect, it } from 'vitest';

const env = useTestEnv();
const storage = env.kubeConfig.makeApiClient(StorageV1Api);
const repo = join(import.meta.dirname, '..', '..', '..');
const outageMs = 60_000;
/** The provisioner name the README example hard-codes. */
const readmeProvisioner = 'example.com/my-provisioner';
const nfsDeploy = join(repo, 'examples', 'nfs', 'deploy');
const nfsOptions = (dir: string, bin: string) => ({
  command: workspaceBinCommand(join(repo, 'packages', dir), bin),
  deployDir: nfsDeploy,
  prefix: `outage-${dir}`,
  // The Lease watch is an optional speed-up the example Role deliberately does not grant; and for a
  // moment after its restart kube-apiserver's authorizer denies requests until its RBAC cache has
  // synced: reads, and the Event writes that record them (the work itself is retried and checked below).
  expectedDenials:
    /Cannot watch the lease|cannot (get|list|watch) resource|cannot (create|patch) resource \\"events\\"/u,
});
const subdir = useNfsProvisioners(env, nfsOptions('nfs-subdir', 'nfs-subdir-provisioner'));
const client = useNfsProvisioners(env, nfsOptions('nfs-client', 'nfs-client-provisioner'));

/** Every program under test, watched for exits. */
const programs: { name: string; program: RunningProgram }[] = [];
/** The ones this file stops (useNfsProvisioners stops its own and checks their exit codes). */
const owned: { name: string; program: RunningProgram }[] = [];
const scratch: string[] = [];

afterAll(async () => {
  const codes = await Promise.all(owned.map(async ({ name, program }) => [name, await program.stop()]));
  await Promise.all(scratch.map((dir) => rm(dir, { recursive: true, force: true })));
  // A graceful stop after the outage still ends with 0.
  expect(Object.fromEntries(codes)).toEqual(Object.fromEntries(owned.map(({ name }) => [name, 0])));
});

async function startReadmeExample(name: string, namespace: string): Promise<RunningProgram> {
  const program = await startProgram({
    command: process.execPath,
    args: [
      '--conditions=@kube-provisioner/source',
      join(repo, 'examples', 'custom-provisioner', 'src', 'readme-example.ts'),
    ],
    env: { PATH: process.env.PATH ?? '', KUBECONFIG: env.kubeconfigPath, POD_NAMESPACE: namespace },
  });
  programs.push({ name, program });
  owned.push({ name, program });
  return program;
}

async function startHostpath(provisionerName: string): Promise<RunningProgram> {
  const rbac = await readFile(join(repo, 'packages', 'hostpath', 'deploy', 'rbac.yaml'), 'utf8');
  await applyManifests(env.kubeConfig, loadAllYaml(rbac) as KubernetesObject[]);
  const account = await env.serviceAccountKubeconfig({
    namespace: 'kube-provisioner-hostpath',
    name: 'hostpath-provisioner',
  });
  const root = await mkdtemp(join(tmpdir(), 'outage-hostpath-'));
  scratch.push(root);
  const cli = workspaceBinCommand(join(repo, 'packages', 'hostpath'), 'kube-hostpath-provisioner');
  const program = await startProgram({
    command: cli.command,
    args: [...cli.args, '--mode', 'shared', '--provisioner-name', provisionerName, '--root', root],
    env: {
      PATH: process.env.PATH ?? '',
      KUBECONFIG: account.kubeconfigPath,
      HEALTH_PORT: '0',
      POD_NAMESPACE: 'kube-provisioner-hostpath',
    },
  });
  programs.push({ name: 'kube-hostpath-provisioner', program });
  owned.push({ name: 'kube-hostpath-provisioner', program });
  return program;
}

async function storageClass(provisioner: string): Promise<string> {
  const name = uniqueName('outage');
  await storage.createStorageClass({
    body: { metadata: { name }, provisioner, reclaimPolicy: 'Delete', volumeBindingMode: 'Immediate' },
  });
  return name;
}

/** Resolves with the name of the first program that exits within `ms`, or `undefined`. */
async function firstExit(ms: number): Promise<string | undefined> {
  let cancel: () => void = () => {};
  const elapsed = new Promise<undefined>((resolve) => {
    const timer = setTimeout(() => resolve(undefined), ms);
    cancel = () => clearTimeout(timer);
  });
  try {
    return await Promise.race([
      elapsed,
      ...programs.map(({ name, program }) => program.exited.then((code) => `${name} (exit ${code})`)),
    ]);
  } finally {
    cancel();
  }
}

const lineCount = (program: RunningProgram): number => program.output().split('\n').length;

describe.skipIf(!nfsToolsAvailable())('a 60 s kube-apiserver outage', () => {
  it('ends no process, and every provisioner provisions afterwards', { timeout: 420_000 }, async () => {
    const namespace = await env.namespace('outage');
    const controlPlane = await env.controlPlane();
    const hostpathName = `e2e.kube-provisioner.io/${uniqueName('outage-hostpath')}`;
    const readme = await startReadmeExample('readme-example', namespace);
    const hostpath = await startHostpath(hostpathName);
    const nfsSubdir = await subdir.deploy('/export');
    const nfsClient = await client.deploy('/export');
    programs.push({ name: 'nfs-subdir-provisioner', program: nfsSubdir.program });
    programs.push({ name: 'nfs-client-provisioner', program: nfsClient.program });
    const classes = {
      readme: await storageClass(readmeProvisioner),
      hostpath: await storageClass(hostpathName),
      subdir: await subdir.storageClass(nfsSubdir),
      client: await client.storageClass(nfsClient),
    };
    for (const program of [hostpath, nfsSubdir.program, nfsClient.program, readme]) {
      await program.waitForOutput(/Started provisioner controller/u, 90_000);
    }

    const linesBefore = programs.map(({ program }) => lineCount(program));
    await controlPlane.stopComponent('kube-apiserver');
    let restarted = false;
    try {
      // Started while the API server is down: it must wait, not exit.
      await startReadmeExample('readme-example-started-during-outage', namespace);
      expect(await firstExit(outageMs)).toBeUndefined();
    } finally {
      await controlPlane.startComponent('kube-apiserver');
      restarted = true;
    }
    expect(restarted).toBe(true);
    // Backoff keeps the retries' log lines to a few per second at most, not a flood.
    const outageLines = programs.slice(0, linesBefore.length).map(({ program }, i) => {
      return lineCount(program) - (linesBefore[i] ?? 0);
    });
    for (const lines of outageLines) expect(lines).toBeLessThan(200);

    const programOf: Record<keyof typeof classes, RunningProgram> = {
      readme,
      hostpath,
      subdir: nfsSubdir.program,
      client: nfsClient.program,
    };
    const bound = await Promise.all(
      (Object.entries(classes) as [keyof typeof classes, string][]).map(async ([name, storageClassName]) => {
        try {
          const pv = await bindClaim(env.kubeConfig, {
            namespace,
            name: `after-${name}`,
            storageClassName,
            timeoutMs: 120_000,
          });
          return [name, pv.spec?.claimRef?.name] as const;
        } catch (err) {
          // What the provisioner did since the restart is the diagnosis.
          const tail = programOf[name].output().split('\n').slice(-60).join('\n');
          throw new Error(`${(err as Error).message}\n--- ${name} provisioner, last lines ---\n${tail}`, {
            cause: err,
          });
        }
      }),
    );
    expect(Object.fromEntries(bound)).toEqual({
      readme: 'after-readme',
      hostpath: 'after-hostpath',
      subdir: 'after-subdir',
      client: 'after-client',
    });
    expect(await firstExit(0)).toBeUndefined();
  });
});
