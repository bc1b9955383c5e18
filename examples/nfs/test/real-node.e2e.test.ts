/**
 * An operator's first hour with the NFS image, on a real node (kubelet and containerd beside the test
 * control plane): the chart installed by `helm install` with upstream's install values, the
 * provisioner running as a pod under the chart's RBAC with its projected token, kubelet's probes
 * passing (and readiness failing while the export cannot take volumes), a claim provisioned onto the
 * export, a `helm upgrade` to a new image tag rolled with SIGTERM from the kubelet without losing or
 * duplicating a claim, two replicas handing leadership over, a non-root pod writing through the GID of
 * a `gidMin`/`gidMax` class, and an upgrade from one export to two.
 *
 * The kernel here has no NFS client, so the kubelet cannot mount the chart's `nfs:` volume: a Helm
 * post-renderer gives the pod the exported directory as a `hostPath` instead, and nothing else of
 * the chart changes. nfs-ganesha exports the same directory, so a volume's directory is checked over
 * NFS too.
 */
import { execFile } from 'node:child_process';
import { chmod, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { listNfsDirectory, type NfsServer, startNfsServer, waitFor } from '@kube-provisioner/testenv';
import {
  arm64EmulationAvailable,
  ensureArm64Emulation,
  ensureProjectImage,
  helmBinary,
  projectImage,
  writeManifestList,
} from '@kube-provisioner/testenv/internal';
import {
  describePod,
  nfsToolsAvailable,
  podLogs,
  realNodeAvailable,
  recordPodExits,
  uniqueName,
  useRealNode,
  useTestEnv,
  waitForPodPhase,
  waitForReadyPods,
} from '@kube-provisioner/testenv/testing';
import { CoordinationV1Api, CoreV1Api, StorageV1Api, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HostPathExportPlugin, hostPathExportPlugin } from './support/export-as-host-path.ts';

const run = promisify(execFile);
const chartDir = join(import.meta.dirname, '..', 'chart', 'nfs-subdir-provisioner');
const image = projectImage('nfs-subdir-provisioner');
/** The tag `helm upgrade` rolls to: the same build under a new name, as a release pipeline would push. */
const rolloutTag = '0.1.0-rollout';
const repository = image.tag.slice(0, image.tag.lastIndexOf(':'));
/** Upstream's install command names the release so; the chart derives every object name from it. */
const release = 'nfs-subdir-external-provisioner';
const provisionerName = `cluster.local/${release}`;
const podSelector = `app=nfs-subdir-external-provisioner,release=${release}`;
const timeoutMs = 120_000;
/** The second export of the upgrade to several exports; its directory is mounted as a host path. */
const secondExport = 'nfs-b.invalid:/b';
const secondClassName = uniqueName('nfs-second');

const ready = (pod: V1Pod): boolean =>
  (pod.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');

/** Whether this machine runs arm64 images (emulated on x86-64); says why not otherwise. */
const arm64 = arm64EmulationAvailable();

describe.skipIf(!(realNodeAvailable() && nfsToolsAvailable()))('the NFS chart on a real node', () => {
  const env = useTestEnv();
  /** The manifest list of both architectures, as a registry would serve `image.tag`. */
  let manifestList = '';
  beforeAll(async () => {
    const built = await ensureProjectImage(image, { onProgress: (message) => console.log(message) });
    manifestList = await writeManifestList(image, built);
    await run('podman', ['--runtime', 'runc', 'tag', image.tag, `${repository}:${rolloutTag}`]);
    if (arm64) await ensureArm64Emulation();
  }, 20 * 60_000);
  const real = useRealNode({ images: [`${repository}:${rolloutTag}`] });
  // The chart's tag is the manifest list, both architectures, as an operator's registry serves it.
  beforeAll(() => real.node().loadImageIndex(manifestList, image.tag), 5 * 60_000);
  const core = env.kubeConfig.makeApiClient(CoreV1Api);
  const storage = env.kubeConfig.makeApiClient(StorageV1Api);
  const leases = env.kubeConfig.makeApiClient(CoordinationV1Api);
  let helm = '';
  let server: NfsServer | undefined;
  /** The directory of the second export the last test upgrades to (only the provisioner reaches it). */
  let secondExportDir = '';
  let plugin: HostPathExportPlugin | undefined;
  let namespace = '';
  let storageClassName = '';

  /**
   * Runs helm against the cluster; `install` and `upgrade` through the post-renderer that mounts the
   * export as a host path.
   */
  async function helmRun(args: readonly string[]): Promise<string> {
    const renders = args[0] === 'install' || args[0] === 'upgrade';
    const kube = ['--kubeconfig', env.kubeconfigPath, '--namespace', namespace];
    if (renders) kube.push('--post-renderer', plugin?.name ?? '');
    const { stdout } = await run(helm, [...args, ...kube], { env: { ...process.env, ...plugin?.env } });
    return stdout;
  }

  async function provisionerPods(): Promise<V1Pod[]> {
    return (await core.listNamespacedPod({ namespace, labelSelector: podSelector })).items;
  }

  async function leaseHolder(): Promise<string> {
    const name = provisionerName.replaceAll('/', '-');
    const lease = await leases.readNamespacedLease({ namespace, name }).catch(() => undefined);
    return lease?.spec?.holderIdentity ?? '';
  }

  async function createClaims(names: readonly string[]): Promise<void> {
    for (const name of names) {
      await core.createNamespacedPersistentVolumeClaim({
        namespace,
        body: {
          metadata: { name },
          spec: {
            storageClassName,
            accessModes: ['ReadWriteMany'],
            resources: { requests: { storage: '1Mi' } },
          },
        },
      });
    }
  }

  /** Waits until every claim in the namespace is Bound; resolves with claim name → volume name. */
  async function boundClaims(count: number): Promise<Map<string, string>> {
    return waitFor(
      async () => {
        const claims = (await core.listNamespacedPersistentVolumeClaim({ namespace })).items;
        const bound = claims.filter((claim) => claim.status?.phase === 'Bound');
        if (claims.length !== count || bound.length !== count) return undefined;
        return new Map(bound.map((claim) => [claim.metadata?.name ?? '', claim.spec?.volumeName ?? '']));
      },
      { timeoutMs, description: `${count} Bound claims in ${namespace}` },
    );
  }

  /** The volume directories of this file's namespace on the export (the default pattern `<ns>-<claim>-<pv>`). */
  async function exportDirectories(): Promise<string[]> {
    const names = await readdir(server?.exportDir ?? '');
    return names.filter((name) => name.startsWith(`${namespace}-`)).sort();
  }

  beforeAll(async () => {
    helm = await helmBinary();
    server = await startNfsServer();
    secondExportDir = await mkdtemp(join(tmpdir(), 'second-export-'));
    await chmod(secondExportDir, 0o755);
    plugin = await hostPathExportPlugin({
      [`${server.host}:${server.exportPath}`]: server.exportDir,
      [secondExport]: secondExportDir,
    });
    namespace = await env.namespace('nfs-node');
    storageClassName = uniqueName('nfs-client');
    // Upstream's install values; only the StorageClass name is unique, as StorageClasses are cluster-wide.
    await helmRun([
      'install',
      release,
      chartDir,
      '--set',
      `nfs.server=${server.host}`,
      '--set',
      `nfs.path=${server.exportPath}`,
      '--set',
      `storageClass.name=${storageClassName}`,
    ]);
  }, 180_000);

  afterAll(async () => {
    // While the node and the provisioner run: the claims' volumes are deleted, then the release
    // (whose cluster-wide RBAC another file's release of the same name would collide with).
    if (namespace) {
      await core.deleteCollectionNamespacedPersistentVolumeClaim({ namespace });
      await waitFor(
        async () =>
          !(await core.listPersistentVolume()).items.some((pv) => pv.spec?.claimRef?.namespace === namespace),
        { timeoutMs, description: `the volumes of ${namespace} to be deleted` },
      );
      await helmRun(['uninstall', release, '--wait', '--timeout', '60s']);
    }
    await storage.deleteStorageClass({ name: secondClassName }).catch(() => undefined);
    await plugin?.remove();
    await server?.stop();
    if (secondExportDir) await rm(secondExportDir, { recursive: true, force: true });
    await run('podman', ['--runtime', 'runc', 'rmi', `${repository}:${rolloutTag}`]).catch(() => undefined);
  }, 300_000);

  it('runs under the chart’s RBAC with its projected token, and kubelet’s probes pass', async () => {
    const [pod] = await waitForReadyPods(core, {
      namespace,
      labelSelector: podSelector,
      count: 1,
      timeoutMs,
    });
    expect(pod?.spec?.nodeName).toBe(real.node().name);
    expect(pod?.spec?.serviceAccountName).toBe(release);
    expect(pod?.spec?.containers[0]?.image).toBe(image.tag);
    const status = pod?.status?.containerStatuses?.[0];
    expect(status?.restartCount, pod && describePod(pod)).toBe(0);
    // The leader, through the Service relay to kube-apiserver, with the token the kubelet projected.
    await waitFor(async () => (await leaseHolder()).startsWith(`${pod?.metadata?.name}_`), {
      timeoutMs,
      description: `${pod?.metadata?.name} to hold the Lease`,
    });
    const logs = await core.readNamespacedPodLog({ namespace, name: pod?.metadata?.name ?? '' });
    expect(logs).not.toMatch(/forbidden|"statusCode":403/iu);
  });

  // The kubelet's CRI plugin runs only the host's platform of a tag (containerd has no setting for
  // another), so the arm64 half of the chart's tag is run by containerd directly, under emulation.
  it.skipIf(!arm64)('holds the arm64 image under the chart’s same tag, and it runs', async () => {
    const arch = await real.node().runImage(image.tag, ['node', '-p', 'process.arch'], 'linux/arm64');
    expect(arch.trim()).toBe('arm64');
    const host = await real.node().runImage(image.tag, ['node', '-p', 'process.arch'], 'linux/amd64');
    expect(host.trim()).toBe('x64');
  });

  it('provisions a claim whose directory appears on the export, also over NFS', async () => {
    await createClaims(['first']);
    const volumes = await boundClaims(1);
    const pv = await core.readPersistentVolume({ name: volumes.get('first') ?? '' });
    expect(pv.spec?.nfs?.server).toBe(server?.host);
    const directory = `${namespace}-first-${pv.metadata?.name}`;
    expect(pv.spec?.nfs?.path).toBe(`${server?.exportPath.replace(/\/$/u, '')}/${directory}`);
    expect(await exportDirectories()).toEqual([directory]);
    const overNfs = await listNfsDirectory(
      server?.location(server.exportPath) ?? { server: '', port: 0, path: '/' },
    );
    expect(overNfs).toContain(directory);
  });

  it('goes NotReady while the export cannot take volumes, and Ready again after, without a restart', async () => {
    const exportDir = server?.exportDir ?? '';
    const [before] = await provisionerPods();
    const name = before?.metadata?.name ?? '';
    // Immutable: not even root may create entries in it (root ignores permission bits).
    await run('chattr', ['+i', exportDir]);
    try {
      await waitFor(async () => !ready(await core.readNamespacedPod({ namespace, name })), {
        timeoutMs,
        description: `${name} to turn NotReady while ${exportDir} is immutable`,
      });
    } finally {
      await run('chattr', ['-i', exportDir]);
    }
    const after = await waitFor(
      async () => {
        const pod = await core.readNamespacedPod({ namespace, name });
        return ready(pod) ? pod : undefined;
      },
      { timeoutMs, description: `${name} to be Ready again` },
    );
    expect(after.status?.containerStatuses?.[0]?.restartCount, describePod(after)).toBe(0);
  });

  it('rolls to a new image tag with helm upgrade: SIGTERM from the kubelet, no claim lost or duplicated', async () => {
    await createClaims(['before-a', 'before-b']);
    await boundClaims(3);
    const [old] = await provisionerPods();
    const oldName = old?.metadata?.name ?? '';
    const exits = await recordPodExits(env.kubeConfig, namespace, podSelector);
    try {
      await helmRun(['upgrade', release, chartDir, '--reuse-values', '--set', `image.tag=${rolloutTag}`]);
      // Claims made while the pods change hands.
      await createClaims(['during-a', 'during-b']);
      const [next] = await waitForReadyPods(core, {
        namespace,
        labelSelector: podSelector,
        count: 1,
        timeoutMs,
      });
      expect(next?.metadata?.name).not.toBe(oldName);
      expect(next?.spec?.containers[0]?.image).toBe(`${repository}:${rolloutTag}`);
      await waitFor(() => exits.deleted(oldName), { timeoutMs, description: `${oldName} to be deleted` });
      const [exit] = exits.exits(oldName);
      // Exit 0 within the grace period: it stopped on the kubelet's SIGTERM, not on the SIGKILL after it.
      expect(exit, `the last state of ${oldName}`).toMatchObject({ exitCode: 0 });
      expect(exit?.afterDeletionMs ?? 0).toBeLessThan(30_000);
    } finally {
      exits.stop();
    }
    const volumes = await boundClaims(5);
    expect(new Set(volumes.values()).size).toBe(5);
    const expected = [...volumes].map(([claim, volume]) => `${namespace}-${claim}-${volume}`).sort();
    expect(await exportDirectories()).toEqual(expected);
    const provisioned = (await core.listPersistentVolume()).items.filter(
      (pv) => pv.spec?.claimRef?.namespace === namespace,
    );
    expect(provisioned).toHaveLength(5);
  });

  it('hands leadership over between two replicas when the leader pod is deleted', async () => {
    await helmRun(['upgrade', release, chartDir, '--reuse-values', '--set', 'replicaCount=2']);
    const pods = await waitFor(
      async () => {
        const running = (await provisionerPods()).filter(
          (pod) => pod.status?.phase === 'Running' && pod.metadata?.deletionTimestamp === undefined,
        );
        return running.length === 2 ? running : undefined;
      },
      { timeoutMs, description: 'two running replicas' },
    );
    const names = pods.map((pod) => pod.metadata?.name ?? '');
    const leader = await waitFor(
      async () => {
        const holder = await leaseHolder();
        return names.find((name) => holder.startsWith(`${name}_`));
      },
      { timeoutMs, description: `one of ${names.join(', ')} to hold the Lease` },
    );
    const standby = names.find((name) => name !== leader) ?? '';
    await core.deleteNamespacedPod({ namespace, name: leader });
    await waitFor(async () => (await leaseHolder()).startsWith(`${standby}_`), {
      timeoutMs,
      description: `${standby} to take the Lease over from ${leader}`,
    });
    await createClaims(['after-handover']);
    const volumes = await boundClaims(6);
    const volume = volumes.get('after-handover') ?? '';
    expect(await exportDirectories()).toContain(`${namespace}-after-handover-${volume}`);
    const standbyPod = await core.readNamespacedPod({ namespace, name: standby });
    expect(standbyPod.status?.containerStatuses?.[0]?.restartCount, describePod(standbyPod)).toBe(0);
    const classes = await storage.readStorageClass({ name: storageClassName });
    expect(classes.provisioner).toBe(provisionerName);
  });

  it('gives a non-root pod (no fsGroup) the volume’s GID of a gidMin/gidMax class: its files get that group', async () => {
    // The kubelet mounts the PV with `mount -t nfs`, which this kernel cannot: for this test the
    // system's mount.nfs is a script binding the exported directory (what the server serves), so
    // the kubelet's own handling of the PV's GID annotation is what is tested. NFS itself: the
    // gid-per-volume kernel-mount test in packages/nfs-subdir.
    const exportDir = server?.exportDir ?? '';
    const exportPrefix = `${server?.host}:${server?.exportPath}`;
    const scratch = await mkdtemp(join(tmpdir(), 'mount-nfs-'));
    const helper = join(scratch, 'mount.nfs');
    await writeFile(
      helper,
      [
        '#!/bin/sh',
        'case "$1" in',
        `  '${exportPrefix}'/*) exec mount --bind "${exportDir}\${1#${exportPrefix}}" "$2" ;;`,
        'esac',
        'echo "mount.nfs (test): no directory for $1" >&2',
        'exit 32',
        '',
      ].join('\n'),
      { mode: 0o755 },
    );
    await run('mount', ['--bind', helper, '/usr/sbin/mount.nfs']);
    const gidNamespace = await env.namespace('nfs-gid');
    const className = uniqueName('nfs-gid');
    try {
      await storage.createStorageClass({
        body: {
          metadata: { name: className },
          provisioner: provisionerName,
          parameters: { gidMin: '5000', gidMax: '5100', archiveOnDelete: 'false' },
        },
      });
      await core.createNamespacedPersistentVolumeClaim({
        namespace: gidNamespace,
        body: {
          metadata: { name: 'shared' },
          spec: {
            storageClassName: className,
            accessModes: ['ReadWriteMany'],
            resources: { requests: { storage: '1Mi' } },
          },
        },
      });
      const volumeName = await waitFor(
        async () => {
          const claim = await core.readNamespacedPersistentVolumeClaim({
            namespace: gidNamespace,
            name: 'shared',
          });
          return claim.status?.phase === 'Bound' ? claim.spec?.volumeName : undefined;
        },
        { timeoutMs, description: 'the GID class’s claim to be Bound' },
      );
      const pv = await core.readPersistentVolume({ name: volumeName ?? '' });
      const gid = Number(pv.metadata?.annotations?.['pv.beta.kubernetes.io/gid']);
      expect(gid).toBeGreaterThanOrEqual(5000);
      expect(gid).toBeLessThanOrEqual(5100);
      const script =
        "require('node:fs').writeFileSync('/data/written', 'by uid ' + process.getuid());" +
        'console.log(JSON.stringify(process.getgroups()))';
      await core.createNamespacedPod({
        namespace: gidNamespace,
        body: {
          metadata: { name: 'writer' },
          spec: {
            nodeSelector: { 'kubernetes.io/hostname': real.node().name },
            restartPolicy: 'Never',
            securityContext: { runAsUser: 1000, runAsGroup: 1000, runAsNonRoot: true },
            containers: [
              {
                name: 'app',
                image: image.tag,
                imagePullPolicy: 'Never',
                command: ['node', '-e', script],
                volumeMounts: [{ name: 'data', mountPath: '/data' }],
              },
            ],
            volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'shared' } }],
          },
        },
      });
      await waitForPodPhase(core, gidNamespace, 'writer', 'Succeeded', timeoutMs);
      const groups = JSON.parse(await podLogs(core, gidNamespace, 'writer')) as number[];
      expect(groups).toContain(gid);
      const directory = (pv.spec?.nfs?.path ?? '').slice((server?.exportPath.length ?? 0) + 1);
      const written = await stat(join(exportDir, directory, 'written'));
      expect({ uid: written.uid, gid: written.gid }).toEqual({ uid: 1000, gid });

      await core.deleteNamespacedPod({ namespace: gidNamespace, name: 'writer' });
      await core.deleteNamespacedPersistentVolumeClaim({ namespace: gidNamespace, name: 'shared' });
      await waitFor(
        async () => !(await core.listPersistentVolume()).items.some((v) => v.metadata?.name === volumeName),
        { timeoutMs, description: `${volumeName} to be deleted` },
      );
    } finally {
      await storage.deleteStorageClass({ name: className }).catch(() => undefined);
      await run('umount', ['/usr/sbin/mount.nfs']);
      await rm(scratch, { recursive: true, force: true });
    }
  });

  it('upgrades from one export to two with helm: volumes stay on theirs, a class of the new one places there', async () => {
    const exports = [
      { name: 'a', server: server?.host, path: server?.exportPath },
      { name: 'b', server: 'nfs-b.invalid', path: '/b' },
    ];
    const first = await core.readNamespacedPersistentVolumeClaim({ namespace, name: 'first' });
    const firstVolume = first?.spec?.volumeName ?? '';
    await helmRun([
      'upgrade',
      release,
      chartDir,
      '--reuse-values',
      // Emptied, not removed: `--reuse-values` keeps a key `--set` to null.
      '--set',
      'nfs.server=',
      '--set',
      'nfs.path=',
      '--set-json',
      `nfs.exports=${JSON.stringify(exports)}`,
    ]);
    const serving = (pod: V1Pod) =>
      ready(pod) &&
      pod.metadata?.deletionTimestamp === undefined &&
      (pod.spec?.containers[0]?.env ?? []).some((variable) => variable.name === 'NFS_EXPORTS');
    await waitFor(
      async () => {
        const pods = await provisionerPods();
        return pods.length === 2 && pods.every(serving);
      },
      { timeoutMs, description: 'two Ready replicas serving both exports, and no other' },
    );
    await storage.createStorageClass({
      body: {
        metadata: { name: secondClassName },
        provisioner: provisionerName,
        parameters: { exports: 'b', archiveOnDelete: 'false' },
      },
    });
    await core.createNamespacedPersistentVolumeClaim({
      namespace,
      body: {
        metadata: { name: 'on-b' },
        spec: {
          storageClassName: secondClassName,
          accessModes: ['ReadWriteMany'],
          resources: { requests: { storage: '1Mi' } },
        },
      },
    });
    const onB = (await boundClaims(7)).get('on-b') ?? '';
    const pv = await core.readPersistentVolume({ name: onB });
    expect(pv.spec?.nfs).toEqual({ server: 'nfs-b.invalid', path: `/b/${namespace}-on-b-${onB}` });
    expect(await readdir(secondExportDir)).toContain(`${namespace}-on-b-${onB}`);

    // A volume made before the upgrade is still found on its export: the chart's class archives it there.
    await core.deleteNamespacedPersistentVolumeClaim({ namespace, name: 'first' });
    await waitFor(
      async () => !(await core.listPersistentVolume()).items.some((v) => v.metadata?.name === firstVolume),
      { timeoutMs, description: `${firstVolume} to be deleted` },
    );
    expect(await readdir(server?.exportDir ?? '')).toContain(`archived-${namespace}-first-${firstVolume}`);
  });
});
