/**
 * `npm run demo`: the bundled NFS provisioner end to end, narrated. A real control plane, a real NFS
 * server (nfs-ganesha, when installed), the example manifests, and the provisioner started exactly as
 * the image's entry point runs it, under the example RBAC; then a claim is bound, written to over
 * NFS, deleted, and its directory archived.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  applyManifests,
  type ControlPlane,
  type NfsServer,
  type RunningProgram,
  readNfsFile,
  startControlPlane,
  startNfsServer,
  startProgram,
  stopWaiting,
  waitFor,
  workspaceBinCommand,
  writeNfsFile,
} from '@kube-provisioner/testenv';
import {
  mintServiceAccountKubeconfig,
  missingNfsPackages,
  nfsAptPackages,
  nfsUrl,
  renderKustomization,
} from '@kube-provisioner/testenv/internal';
import {
  CoordinationV1Api,
  CoreV1Api,
  KubeConfig,
  type KubernetesObject,
  type V1Deployment,
  type V1PersistentVolume,
} from '@kubernetes/client-node';
import { createNarrative } from './narrative.ts';
import { startProvisionerPod } from './provisioner-pod.ts';

/** Options of {@link runDemo}. */
export interface DemoOptions {
  /** Admin kubeconfig of a running cluster; default: start a kube-testenv control plane. */
  readonly kubeconfigPath?: string;
  /** Where the narrative goes; default standard output. */
  readonly print?: (line: string) => void;
}

/** What the demo observed, for tests. */
export interface DemoResult {
  /** Whether the file went through a real NFS server. */
  readonly viaNfs: boolean;
  /** The bound PV's `spec.nfs`. */
  readonly volume: { readonly server: string; readonly path: string };
  /** The volume directory, relative to the export. */
  readonly volumeDir: string;
  /** The archived directory, relative to the export. */
  readonly archiveDir: string;
  /** The file written into the volume, as read back from the archive on disk. */
  readonly archivedContent: string;
  /** How the provisioner ran: as a pod on a real node, or as a local process when there is none. */
  readonly provisionerRanAs: 'pod' | 'process';
}

const exampleDir = join(import.meta.dirname, '..');
const deployDir = join(exampleDir, 'deploy');
const timeoutMs = 120_000;
const provisionerNamespace = 'nfs-provisioner';
const serviceAccount = 'nfs-subdir-provisioner';
const claimName = 'data';
const fileName = 'hello.txt';

/** The directory of the nfs-subdir package, wherever the workspace resolves it. */
function nfsSubdirPackageDir(): string {
  return dirname(dirname(fileURLToPath(import.meta.resolve('@kube-provisioner/nfs-subdir'))));
}

function isKind<T extends KubernetesObject>(kind: string): (object: KubernetesObject) => object is T {
  return (object): object is T => object.kind === kind;
}

/** Runs the demo and cleans up everything it started, whatever happens. */
export async function runDemo(options: DemoOptions = {}): Promise<DemoResult> {
  const print = options.print ?? ((line: string) => process.stdout.write(`${line}\n`));
  const story = createNarrative(print);
  const cleanups: (() => Promise<unknown>)[] = [];
  let provisioner: RunningProgram | undefined;
  print('kube-provisioner demo: the NFS provisioner image, end to end');
  try {
    const kubeConfig = new KubeConfig();
    let namespace = 'demo';
    let controlPlane: ControlPlane | undefined;
    if (options.kubeconfigPath === undefined) {
      const started = await story.step('Start the test control plane', () =>
        startControlPlane({ onProgress: (message) => story.detail(message) }),
      );
      controlPlane = started;
      cleanups.push(() => started.stop());
      kubeConfig.loadFromFile(started.kubeconfigPath);
    } else {
      kubeConfig.loadFromFile(options.kubeconfigPath);
      namespace = `demo-${Date.now().toString(36)}`;
    }
    const core = kubeConfig.makeApiClient(CoreV1Api);

    const missing = missingNfsPackages();
    const server: NfsServer | undefined = await story.step('Start the NFS server', async () => {
      if (missing.length > 0) {
        story.detail(`nfs-ganesha is not installed (missing: ${missing.join(', ')}).`);
        story.detail('Using a PLAIN DIRECTORY instead: volumes are real directories, but nothing is served');
        story.detail(`over NFS. For the full demo: apt-get install -y ${nfsAptPackages.join(' ')}`);
        return undefined;
      }
      const started = await startNfsServer();
      story.detail(`nfs-ganesha (VFS) serves ${started.exportDir}`);
      story.detail(`as ${started.host}:${started.exportPath} on port ${started.port} (NFSv4, loopback only)`);
      return started;
    });
    if (server) cleanups.push(() => server.stop());
    const workDir = await mkdtemp(join(tmpdir(), 'nfs-demo-'));
    cleanups.push(() => rm(workDir, { recursive: true, force: true }));
    const exportDir = server?.exportDir ?? join(workDir, 'export');
    await mkdir(exportDir, { recursive: true });
    const exportPath = server?.exportPath ?? '/export';
    const nfsHost = server?.host ?? '127.0.0.1';

    const deployment = await story.step(
      'Apply the example manifests (kubectl kustomize examples/nfs/deploy)',
      async () => {
        const objects = await renderKustomization(deployDir);
        const workload = objects.find(isKind<V1Deployment>('Deployment'));
        if (!workload) throw new Error('the example manifests have no Deployment');
        const applied = objects.filter((object) => object !== workload);
        await applyManifests(kubeConfig, applied);
        for (const object of applied) story.detail(`applied ${object.kind} ${object.metadata?.name}`);
        await applyManifests(kubeConfig, [workload], { dryRun: true });
        story.detail(`Deployment ${workload.metadata?.name}: accepted by a server-side dry run`);
        return workload;
      },
    );

    const storageClassName = 'nfs-client';
    const env = Object.fromEntries(
      (deployment.spec?.template.spec?.containers[0]?.env ?? [])
        .filter((variable) => variable.value !== undefined)
        .map((variable) => [variable.name, variable.value ?? '']),
    );
    const provisionerName = env.PROVISIONER_NAME ?? '';
    const cluster = controlPlane;
    const pod =
      cluster === undefined
        ? undefined
        : await story.step('Run the provisioner as a pod on a real node (kubelet and containerd)', () =>
            startProvisionerPod({
              controlPlane: cluster,
              kubeConfig,
              deployment,
              env: { NFS_SERVER: nfsHost, NFS_PATH: exportPath },
              exportDir,
              timeoutMs,
              detail: (line) => story.detail(line),
            }),
          );
    if (pod) cleanups.push(() => pod.stop());
    const startLocally = () =>
      story.step('Start nfs-subdir-provisioner as the image does', async () => {
        const credentials = await mintServiceAccountKubeconfig(
          kubeConfig,
          { namespace: provisionerNamespace, name: serviceAccount },
          join(workDir, `${serviceAccount}.kubeconfig`),
        );
        cleanups.push(() => rm(credentials.kubeconfigPath, { force: true }));
        const command = workspaceBinCommand(nfsSubdirPackageDir(), 'nfs-subdir-provisioner');
        const program = await startProgram({
          ...command,
          args: [...command.args, '--mount-root', exportDir],
          env: {
            PATH: process.env.PATH ?? '',
            ...env,
            NFS_SERVER: nfsHost,
            NFS_PATH: exportPath,
            POD_NAMESPACE: provisionerNamespace,
            KUBECONFIG: credentials.kubeconfigPath,
            METRICS_PORT: '0',
          },
        });
        story.detail(`PROVISIONER_NAME=${provisionerName} NFS_SERVER=${nfsHost} NFS_PATH=${exportPath}`);
        story.detail(`--mount-root ${exportDir} (where the pod would mount ${nfsHost}:${exportPath})`);
        story.detail(
          `credentials: ServiceAccount ${provisionerNamespace}/${serviceAccount} under the example RBAC`,
        );
        const leases = kubeConfig.makeApiClient(CoordinationV1Api);
        const leaseName = provisionerName.replaceAll('/', '-');
        let exitCode: number | null | undefined;
        void program.exited.then((code) => {
          exitCode = code;
        });
        const lease = await waitFor(
          async () => {
            if (exitCode !== undefined)
              throw stopWaiting(new Error(`the provisioner exited with ${exitCode}`));
            return leases.readNamespacedLease({ namespace: provisionerNamespace, name: leaseName });
          },
          { timeoutMs, description: `the leader Lease ${provisionerNamespace}/${leaseName}` },
        );
        story.detail(`leader: Lease ${leaseName} held by ${lease.spec?.holderIdentity}`);
        return program;
      });
    if (pod === undefined) {
      const started = await startLocally();
      provisioner = started;
      cleanups.push(() => started.stop());
    }

    const pv: V1PersistentVolume = await story.step(
      `Create claim ${namespace}/${claimName} (1Gi, ReadWriteMany, class ${storageClassName})`,
      async () => {
        await core.createNamespace({ body: { metadata: { name: namespace } } });
        if (options.kubeconfigPath !== undefined) {
          cleanups.push(() => core.deleteNamespace({ name: namespace }));
        }
        await core.createNamespacedPersistentVolumeClaim({
          namespace,
          body: {
            metadata: { name: claimName },
            spec: {
              storageClassName,
              accessModes: ['ReadWriteMany'],
              resources: { requests: { storage: '1Gi' } },
            },
          },
        });
        const volumeName = await waitFor(
          async () => {
            const claim = await core.readNamespacedPersistentVolumeClaim({ namespace, name: claimName });
            return claim.status?.phase === 'Bound' ? claim.spec?.volumeName : undefined;
          },
          { timeoutMs, description: `claim ${namespace}/${claimName} to be Bound` },
        );
        const volume = await core.readPersistentVolume({ name: volumeName });
        story.detail(`Bound to ${volumeName}: nfs ${volume.spec?.nfs?.server}:${volume.spec?.nfs?.path}`);
        return volume;
      },
    );
    const nfs = { server: pv.spec?.nfs?.server ?? '', path: pv.spec?.nfs?.path ?? '' };
    const volumeDir = posix.relative(exportPath, nfs.path);
    story.detail(`directory on the export: ${volumeDir}/ (on disk ${join(exportDir, volumeDir)})`);

    const content = `written at ${new Date().toISOString()} by the kube-provisioner demo\n`;
    await story.step(`Write ${fileName} into the PV's server:path`, async () => {
      if (server) {
        const location = server.location(`${nfs.path}/${fileName}`);
        await writeNfsFile(location, content);
        story.detail(`nfs-cp -> ${nfsUrl(location)}`);
        story.detail(`read back over NFS: ${(await readNfsFile(location)).trim()}`);
      } else {
        await writeFile(join(exportDir, volumeDir, fileName), content);
        story.detail('(no NFS server: written to the directory on disk)');
      }
      const onDisk = await readFile(join(exportDir, volumeDir, fileName), 'utf8');
      if (onDisk !== content) throw new Error(`the file on disk reads ${JSON.stringify(onDisk)}`);
      story.detail(`on disk at ${join(exportDir, volumeDir, fileName)}: same content`);
    });

    const archiveDir = await story.step(`Delete the claim; the class archives the directory`, async () => {
      await core.deleteNamespacedPersistentVolumeClaim({ namespace, name: claimName });
      await waitFor(
        async () => {
          const volumes = await core.listPersistentVolume();
          return !volumes.items.some((volume) => volume.metadata?.name === pv.metadata?.name);
        },
        { timeoutMs, description: `PV ${pv.metadata?.name} to be deleted` },
      );
      story.detail(`PV ${pv.metadata?.name} deleted by the provisioner`);
      const parent = posix.dirname(volumeDir);
      const entries = await readdir(join(exportDir, parent));
      const archived = entries.find((entry) => entry.startsWith(`archived-${posix.basename(volumeDir)}`));
      if (!archived) throw new Error(`no archive in ${parent}/: ${entries.join(', ')}`);
      story.detail(`${parent}/ now holds: ${entries.filter((entry) => !entry.startsWith('.')).join(', ')}`);
      return posix.join(parent, archived);
    });
    const archivedContent = await readFile(join(exportDir, archiveDir, fileName), 'utf8');
    story.detail(`${archiveDir}/${fileName}: ${archivedContent.trim()}`);
    return {
      viaNfs: server !== undefined,
      volume: nfs,
      volumeDir,
      archiveDir,
      archivedContent,
      provisionerRanAs: pod === undefined ? 'process' : 'pod',
    };
  } catch (err) {
    if (provisioner)
      print(`\nprovisioner output (last lines):\n${provisioner.output().split('\n').slice(-20).join('\n')}`);
    throw err;
  } finally {
    print('\nCleaning up');
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
    print(`demo finished in ${story.elapsed()}`);
  }
}

if (import.meta.main) {
  await runDemo().then(
    () => {
      process.exitCode = 0;
    },
    (err: unknown) => {
      process.stderr.write(`demo failed: ${(err as Error).message}\n`);
      process.exitCode = 1;
    },
  );
}
