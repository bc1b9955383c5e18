/**
 * The hostpath image as an operator runs it, on a real node (kubelet and containerd beside the test
 * control plane): the shipped RBAC, DaemonSet and StorageClass applied unchanged, the provisioner
 * running as a pod with its projected service-account token and kubelet's probes, and workload pods
 * writing into the volumes it provisions, also across two roots of a node on two loop-mounted file
 * systems. The node is this host, so a volume's directory is checked on disk too.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { applyManifests, waitFor } from '@kube-provisioner/testenv';
import { ensureProjectImage, projectImage } from '@kube-provisioner/testenv/internal';
import {
  describePod,
  podLogs,
  realNodeAvailable,
  uniqueName,
  useRealNode,
  useTestEnv,
  waitForPodPhase,
  waitForReadyPods,
} from '@kube-provisioner/testenv/testing';
import {
  ApiException,
  AppsV1Api,
  CoordinationV1Api,
  CoreV1Api,
  type KubernetesObject,
  loadAllYaml,
  StorageV1Api,
  type V1DaemonSet,
  type V1PersistentVolume,
  type V1Pod,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const deployDir = join(import.meta.dirname, '..', 'deploy');
const image = projectImage('hostpath');
const systemNamespace = 'kube-provisioner-hostpath';
/** The DaemonSet's root, unchanged: a fixed host path, removed afterwards if this file created it. */
const root = '/var/lib/kube-provisioner/hostpath';
/** The shared-mode Deployment's root, likewise. */
const sharedRoot = '/var/lib/kube-provisioner/hostpath-shared';
const timeoutMs = 90_000;
const run = promisify(execFile);

const ignoreNotFound = (err: unknown): void => {
  if (!(err instanceof ApiException && err.code === 404)) throw err;
};

async function manifests(file: string): Promise<KubernetesObject[]> {
  return loadAllYaml(await readFile(join(deployDir, file), 'utf8')) as KubernetesObject[];
}

describe.skipIf(!realNodeAvailable())('the hostpath image on a real node', () => {
  const env = useTestEnv();
  beforeAll(() => ensureProjectImage(image, { onProgress: (message) => console.log(message) }), 20 * 60_000);
  const real = useRealNode({ images: [image.tag] });
  const core = env.kubeConfig.makeApiClient(CoreV1Api);
  const apps = env.kubeConfig.makeApiClient(AppsV1Api);
  const storage = env.kubeConfig.makeApiClient(StorageV1Api);
  const leases = env.kubeConfig.makeApiClient(CoordinationV1Api);
  const rootExisted = existsSync('/var/lib/kube-provisioner');
  let provisioner: V1Pod | undefined;

  beforeAll(async () => {
    for (const file of ['rbac.yaml', 'daemonset.yaml', 'storageclass-per-node.yaml']) {
      await applyManifests(env.kubeConfig, await manifests(file));
    }
    // On this node only: a fake Node left by another file would get a pod that never runs.
    [provisioner] = await waitForReadyPods(core, {
      namespace: systemNamespace,
      labelSelector: 'app.kubernetes.io/name=hostpath-provisioner',
      fieldSelector: `spec.nodeName=${real.node().name}`,
      count: 1,
      timeoutMs,
    });
  }, 180_000);

  afterAll(async () => {
    // While the node still runs, so the pods get their SIGTERM and the kubelet unmounts their volumes.
    await apps.deleteNamespacedDaemonSet({ namespace: systemNamespace, name: 'hostpath-provisioner' });
    await apps
      .deleteNamespacedDeployment({ namespace: systemNamespace, name: 'hostpath-provisioner' })
      .catch(ignoreNotFound);
    await waitFor(
      async () =>
        (
          await core.listNamespacedPod({
            namespace: systemNamespace,
            labelSelector: 'app.kubernetes.io/name in (hostpath-provisioner,hostpath-provisioner-shared)',
          })
        ).items.length === 0,
      { timeoutMs: 60_000, description: 'the provisioner pods to be gone' },
    );
    for (const name of ['hostpath', 'hostpath-local', 'hostpath-shared']) {
      await storage.deleteStorageClass({ name }).catch(ignoreNotFound);
    }
    if (!rootExisted) await rm('/var/lib/kube-provisioner', { recursive: true, force: true });
  }, 120_000);

  /**
   * A pod on the real node that runs the JavaScript `script` with the claim mounted at /data, to
   * completion, and resolves with its output. The image's own Node.js runs it: the image has no shell.
   */
  async function runOnNode(
    namespace: string,
    name: string,
    claimName: string,
    script: string,
  ): Promise<string> {
    await core.createNamespacedPod({
      namespace,
      body: {
        metadata: { name },
        spec: {
          nodeSelector: { 'kubernetes.io/hostname': real.node().name },
          restartPolicy: 'Never',
          containers: [
            {
              name: 'app',
              image: image.tag,
              imagePullPolicy: 'Never',
              command: ['node', '-e', script],
              volumeMounts: [{ name: 'data', mountPath: '/data' }],
            },
          ],
          volumes: [{ name: 'data', persistentVolumeClaim: { claimName } }],
        },
      },
    });
    await waitForPodPhase(core, namespace, name, 'Succeeded', timeoutMs);
    return podLogs(core, namespace, name);
  }

  async function boundVolume(namespace: string, claim: string): Promise<V1PersistentVolume> {
    const volumeName = await waitFor(
      async () => {
        const pvc = await core.readNamespacedPersistentVolumeClaim({ namespace, name: claim });
        return pvc.status?.phase === 'Bound' ? pvc.spec?.volumeName : undefined;
      },
      { timeoutMs, description: `claim ${namespace}/${claim} to be Bound` },
    );
    return core.readPersistentVolume({ name: volumeName });
  }

  it('runs the shipped DaemonSet: kubelet’s probes pass and the pod uses its projected token', async () => {
    expect(provisioner, 'a provisioner pod on the real node').toBeDefined();
    const pod = await core.readNamespacedPod({
      namespace: systemNamespace,
      name: provisioner?.metadata?.name ?? '',
    });
    const container = pod.status?.containerStatuses?.[0];
    expect(container?.ready, describePod(pod)).toBe(true);
    expect(container?.restartCount, describePod(pod)).toBe(0);
    expect(pod.spec?.serviceAccountName).toBe('hostpath-provisioner');
    // The projected token volume the admission plugin adds: the pod talks to the API with it.
    expect(
      pod.spec?.volumes?.some((volume) => volume.projected?.sources?.some((s) => s.serviceAccountToken)),
    ).toBe(true);
    const logs = await podLogs(core, systemNamespace, pod.metadata?.name ?? '');
    expect(logs).not.toMatch(/forbidden|"statusCode":403/iu);
  });

  it('provisions a WaitForFirstConsumer claim that a pod writes and a second pod reads back, and removes it when deleted', async () => {
    const namespace = await env.namespace('hostpath-node');
    await core.createNamespacedPersistentVolumeClaim({
      namespace,
      body: {
        metadata: { name: 'data' },
        spec: {
          storageClassName: 'hostpath',
          accessModes: ['ReadWriteOnce'],
          resources: { requests: { storage: '1Gi' } },
        },
      },
    });
    const token = uniqueName('written-by-writer');
    const write = `require('node:fs').writeFileSync('/data/hello.txt', '${token}\\n')`;
    await runOnNode(namespace, 'writer', 'data', write);
    const pv = await boundVolume(namespace, 'data');
    const path = pv.spec?.hostPath?.path ?? '';
    expect(path.startsWith(`${root}/`), path).toBe(true);
    expect(pv.spec?.nodeAffinity?.required?.nodeSelectorTerms[0]?.matchExpressions).toEqual([
      { key: 'kubernetes.io/hostname', operator: 'In', values: [real.node().name] },
    ]);
    expect(await readFile(join(path, 'hello.txt'), 'utf8')).toBe(`${token}\n`);

    const read = "process.stdout.write(require('node:fs').readFileSync('/data/hello.txt', 'utf8'))";
    expect(await runOnNode(namespace, 'reader', 'data', read)).toBe(`${token}\n`);

    await core.deleteCollectionNamespacedPod({ namespace });
    await waitFor(async () => (await core.listNamespacedPod({ namespace })).items.length === 0, {
      timeoutMs,
      description: 'the pods to be gone',
    });
    await core.deleteNamespacedPersistentVolumeClaim({ namespace, name: 'data' });
    await waitFor(
      async () =>
        !(await core.listPersistentVolume()).items.some((v) => v.metadata?.name === pv.metadata?.name),
      { timeoutMs, description: `volume ${pv.metadata?.name} to be deleted` },
    );
    expect(existsSync(path), `${path} after the claim's deletion`).toBe(false);
  });

  it('gives each of three StatefulSet replicas its own volume, and removes them with their claims', async () => {
    const namespace = await env.namespace('hostpath-sts');
    const labels = { app: 'web' };
    // Each replica records its name in its volume, then keeps running.
    const script =
      "require('node:fs').writeFileSync('/data/name', require('node:os').hostname()); setInterval(() => {}, 60_000)";
    await apps.createNamespacedStatefulSet({
      namespace,
      body: {
        metadata: { name: 'web' },
        spec: {
          serviceName: 'web',
          replicas: 3,
          podManagementPolicy: 'Parallel',
          selector: { matchLabels: labels },
          template: {
            metadata: { labels },
            spec: {
              nodeSelector: { 'kubernetes.io/hostname': real.node().name },
              terminationGracePeriodSeconds: 1,
              containers: [
                {
                  name: 'app',
                  image: image.tag,
                  imagePullPolicy: 'Never',
                  command: ['node', '-e', script],
                  volumeMounts: [{ name: 'data', mountPath: '/data' }],
                },
              ],
            },
          },
          volumeClaimTemplates: [
            {
              metadata: { name: 'data' },
              spec: {
                storageClassName: 'hostpath',
                accessModes: ['ReadWriteOnce'],
                resources: { requests: { storage: '1Gi' } },
              },
            },
          ],
        },
      },
    });
    await waitForReadyPods(core, { namespace, labelSelector: 'app=web', count: 3, timeoutMs });
    const paths: string[] = [];
    for (const ordinal of [0, 1, 2]) {
      const pv = await boundVolume(namespace, `data-web-${ordinal}`);
      const path = pv.spec?.hostPath?.path ?? '';
      paths.push(path);
      await waitFor(() => readFile(join(path, 'name'), 'utf8'), {
        timeoutMs,
        description: `web-${ordinal} to write its name`,
      }).then((name) => expect(name).toBe(`web-${ordinal}`));
    }
    expect(new Set(paths).size).toBe(3);

    await apps.deleteNamespacedStatefulSet({ namespace, name: 'web' });
    // The garbage collector removes the pods; the claims stay until deleted, as StatefulSets keep them.
    await waitFor(async () => (await core.listNamespacedPod({ namespace })).items.length === 0, {
      timeoutMs,
      description: 'the StatefulSet pods to be gone',
    });
    await core.deleteCollectionNamespacedPersistentVolumeClaim({ namespace });
    await waitFor(() => paths.every((path) => !existsSync(path)), {
      timeoutMs,
      description: `the volume directories ${paths.join(', ')} to be removed`,
    });
  });

  it('runs the shipped shared-mode Deployment: two replicas, and another replica takes over when the leader pod goes', async () => {
    // The shared root must exist (hostPath type Directory): it stands for a filesystem mounted on every node.
    await mkdir(sharedRoot, { recursive: true });
    for (const file of ['deployment.yaml', 'storageclass-shared.yaml']) {
      await applyManifests(env.kubeConfig, await manifests(file));
    }
    const pods = await waitForReadyPods(core, {
      namespace: systemNamespace,
      labelSelector: 'app.kubernetes.io/name=hostpath-provisioner-shared',
      count: 2,
      timeoutMs,
    });
    const names = pods.map((pod) => pod.metadata?.name ?? '');
    const holder = async (): Promise<string> => {
      const lease = await leases
        .readNamespacedLease({ namespace: systemNamespace, name: 'kube-provisioner.io-hostpath-shared' })
        .catch(() => undefined);
      return lease?.spec?.holderIdentity ?? '';
    };
    const leader = await waitFor(
      async () => {
        const identity = await holder();
        return names.find((name) => identity.startsWith(`${name}_`));
      },
      { timeoutMs, description: `one of ${names.join(', ')} to lead` },
    );

    const namespace = await env.namespace('hostpath-shared');
    const claim = (name: string) =>
      core.createNamespacedPersistentVolumeClaim({
        namespace,
        body: {
          metadata: { name },
          spec: {
            storageClassName: 'hostpath-shared',
            accessModes: ['ReadWriteOnce'],
            resources: { requests: { storage: '1Gi' } },
          },
        },
      });
    await claim('before');
    const before = await boundVolume(namespace, 'before');
    expect(before.spec?.hostPath?.path?.startsWith(`${sharedRoot}/`)).toBe(true);

    await core.deleteNamespacedPod({ namespace: systemNamespace, name: leader });
    // The leader releases the Lease on SIGTERM; the standby or the Deployment's replacement pod,
    // whichever campaigns first, takes it.
    await waitFor(
      async () => {
        const identity = await holder();
        return identity !== '' && !identity.startsWith(`${leader}_`);
      },
      { timeoutMs, description: `another replica to take over from ${leader}` },
    );
    await claim('after');
    const after = await boundVolume(namespace, 'after');
    const token = uniqueName('shared');
    await runOnNode(
      namespace,
      'writer',
      'after',
      `require('node:fs').writeFileSync('/data/token', '${token}')`,
    );
    expect(await readFile(join(after.spec?.hostPath?.path ?? '', 'token'), 'utf8')).toBe(token);

    await core.deleteCollectionNamespacedPod({ namespace });
    await waitFor(async () => (await core.listNamespacedPod({ namespace })).items.length === 0, {
      timeoutMs,
      description: 'the pods to be gone',
    });
    await core.deleteCollectionNamespacedPersistentVolumeClaim({ namespace });
    const paths = [before, after].map((pv) => pv.spec?.hostPath?.path ?? '');
    await waitFor(() => paths.every((path) => !existsSync(path)), {
      timeoutMs,
      description: `${paths.join(', ')} to be removed`,
    });
  });

  it('places volumes on the roomier of two roots on two loop-mounted file systems, and pods use both', async () => {
    // A second per-node instance of another provisioner name, as an operator with two disks runs it.
    const rootsDir = '/var/lib/kube-provisioner/roots';
    const images = await mkdtemp(join(tmpdir(), 'hostpath-roots-'));
    const sizes = { fast: '64M', bulk: '128M' };
    const name = 'hostpath-provisioner-roots';
    const provisionerName = 'kube-provisioner.io/hostpath-roots';
    const className = uniqueName('hostpath-roots');
    const mounted: string[] = [];
    try {
      for (const [root, size] of Object.entries(sizes)) {
        const file = join(images, `${root}.img`);
        await run('truncate', ['-s', size, file]);
        // No blocks reserved for root: free space is what the provisioner and pods both see.
        await run('mkfs.ext4', ['-q', '-F', '-m', '0', file]);
        await mkdir(join(rootsDir, root), { recursive: true });
        await run('mount', ['-o', 'loop', file, join(rootsDir, root)]);
        mounted.push(join(rootsDir, root));
      }
      const [shipped] = (await manifests('daemonset.yaml')) as V1DaemonSet[];
      const daemonSet = structuredClone(shipped) as V1DaemonSet;
      const labels = { 'app.kubernetes.io/name': name };
      daemonSet.metadata = { ...daemonSet.metadata, name, labels };
      if (daemonSet.spec) daemonSet.spec.selector = { matchLabels: labels };
      const pod = daemonSet.spec?.template;
      if (pod) pod.metadata = { labels };
      const container = pod?.spec?.containers[0];
      if (container && pod?.spec) {
        container.env = (container.env ?? []).map((variable) => {
          if (variable.name === 'PROVISIONER_NAME') return { name: variable.name, value: provisionerName };
          if (variable.name === 'HOSTPATH_ROOT') {
            return { name: variable.name, value: `fast=${rootsDir}/fast,bulk=${rootsDir}/bulk` };
          }
          return variable;
        });
        container.volumeMounts = Object.keys(sizes).map((root) => ({
          name: root,
          mountPath: `${rootsDir}/${root}`,
        }));
        pod.spec.volumes = Object.keys(sizes).map((root) => ({
          name: root,
          hostPath: { path: `${rootsDir}/${root}`, type: 'Directory' },
        }));
      }
      await apps.createNamespacedDaemonSet({ namespace: systemNamespace, body: daemonSet });
      await storage.createStorageClass({
        body: {
          metadata: { name: className },
          provisioner: provisionerName,
          volumeBindingMode: 'WaitForFirstConsumer',
          reclaimPolicy: 'Delete',
        },
      });
      await waitForReadyPods(core, {
        namespace: systemNamespace,
        labelSelector: `app.kubernetes.io/name=${name}`,
        fieldSelector: `spec.nodeName=${real.node().name}`,
        count: 1,
        timeoutMs,
      });
      const namespace = await env.namespace('hostpath-roots');
      const claim = async (claimName: string) =>
        core.createNamespacedPersistentVolumeClaim({
          namespace,
          body: {
            metadata: { name: claimName },
            spec: {
              storageClassName: className,
              accessModes: ['ReadWriteOnce'],
              resources: { requests: { storage: '10Mi' } },
            },
          },
        });
      // The first volume goes to bulk, the roomier; 80 MiB written there leave fast the roomier.
      await claim('first');
      await runOnNode(
        namespace,
        'fill',
        'first',
        "require('node:fs').writeFileSync('/data/fill', Buffer.alloc(80 * 2 ** 20, 1))",
      );
      const first = await boundVolume(namespace, 'first');
      expect(first.spec?.hostPath?.path).toMatch(new RegExp(`^${rootsDir}/bulk/`, 'u'));
      await claim('second');
      await runOnNode(namespace, 'small', 'second', "require('node:fs').writeFileSync('/data/small', 'x')");
      const second = await boundVolume(namespace, 'second');
      expect(second.spec?.hostPath?.path).toMatch(new RegExp(`^${rootsDir}/fast/`, 'u'));
      expect(await readFile(join(second.spec?.hostPath?.path ?? '', 'small'), 'utf8')).toBe('x');

      await core.deleteCollectionNamespacedPod({ namespace });
      await core.deleteCollectionNamespacedPersistentVolumeClaim({ namespace });
      await waitFor(
        async () =>
          !(await core.listPersistentVolume()).items.some((v) => v.spec?.claimRef?.namespace === namespace),
        { timeoutMs, description: `the volumes of ${namespace} to be deleted` },
      );
    } finally {
      await apps.deleteNamespacedDaemonSet({ namespace: systemNamespace, name }).catch(ignoreNotFound);
      await waitFor(
        async () =>
          (
            await core.listNamespacedPod({
              namespace: systemNamespace,
              labelSelector: `app.kubernetes.io/name=${name}`,
            })
          ).items.length === 0,
        { timeoutMs: 60_000, description: `the ${name} pods to be gone` },
      );
      await storage.deleteStorageClass({ name: className }).catch(ignoreNotFound);
      for (const dir of mounted) await run('umount', [dir]);
      await rm(rootsDir, { recursive: true, force: true });
      await rm(images, { recursive: true, force: true });
    }
  });

  it('stays Ready with no restarts through the tests', async () => {
    const pod = await core.readNamespacedPod({
      namespace: systemNamespace,
      name: provisioner?.metadata?.name ?? '',
    });
    expect(pod.status?.containerStatuses?.[0]?.restartCount, describePod(pod)).toBe(0);
    expect(pod.status?.containerStatuses?.[0]?.ready, describePod(pod)).toBe(true);
  });
});
