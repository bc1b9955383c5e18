/**
 * Records upstream nfs-subdir-external-provisioner over the matrix of `upstream-matrix.ts` into a
 * fixture (`test/fixtures/upstream/<label>.json`) that `test/upstream-replay.test.ts` replays on ours.
 * No upstream code is part of this repository: the script builds upstream from a checkout you give it.
 *
 *   git clone https://github.com/kubernetes-sigs/nfs-subdir-external-provisioner /tmp/upstream
 *   git -C /tmp/upstream checkout v4.0.2        # or master
 *   npm exec -- node --conditions=@kube-provisioner/source packages/testenv/src/cli.ts exec -- \
 *     npm exec -- node --conditions=@kube-provisioner/source \
 *     packages/nfs-subdir/scripts/record-upstream.ts --checkout /tmp/upstream --label v4.0.2
 *
 * Then format it like the rest (`npx biome check --write <fixture>`) and run
 * `test/upstream-replay.test.ts`: every difference must be listed in `allowed-differences.json`.
 *
 * The classic nfs-client-provisioner (kubernetes-incubator/external-storage, a GOPATH-era tree with
 * `vendor/`) is recorded with `--classic` over the cases it understands: check out tag
 * `nfs-client-provisioner-v3.1.0-k8s1.11` under `$GOPATH/src/github.com/kubernetes-incubator/`, build
 * `./nfs-client/cmd/nfs-client-provisioner` with `GO111MODULE=off`, and pass `--binary` and
 * `--checkout <tree>/nfs-client --label nfs-client-v3.1.0`. It cannot provision here (see
 * `premadeVolume`), so only its Delete is recorded.
 *
 * `--binary <file>` runs an upstream binary built earlier instead of building one (the checkout
 * still provides `deploy/rbac.yaml`); `--commit <rev>` names the upstream commit in the fixture's
 * provenance when the checkout is not a git repository (a snapshot or a tarball).
 *
 * It runs as upstream's pod would: umask 022, the environment `NFS_SERVER`, `NFS_PATH`,
 * `PROVISIONER_NAME`, `KUBERNETES_SERVICE_HOST`/`_PORT`, the token and CA of a ServiceAccount bound by
 * upstream's own `deploy/rbac.yaml` at `/var/run/secrets/kubernetes.io/serviceaccount`, and the export
 * at upstream's hardcoded `/persistentvolumes` (bind mounts in a private mount namespace, `unshare -m`:
 * run as root; both mount points are created on the host if missing). Go modules come from the Go
 * module proxy (`vendor/` is used when present).
 *
 * v4.0.2's module graph names `vbom.ml/util` (through k8s.io/kubectl), which the proxy no longer
 * serves (403). The provisioner never imports it, so an empty stand-in satisfies the graph:
 * `mkdir /tmp/vbom && echo 'module vbom.ml/util' > /tmp/vbom/go.mod`, then add
 * `--replace vbom.ml/util=/tmp/vbom`. Replacements go into a copy of go.mod (`-modfile`); the
 * checkout is not modified.
 */
import { execFile } from 'node:child_process';
import { chmod, copyFile, lstat, mkdir, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative as relativePath } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { applyManifests, deleteClaimAndVolume, startProgram, waitFor } from '@kube-provisioner/testenv';
import { mintServiceAccountKubeconfig } from '@kube-provisioner/testenv/internal';
import {
  CoreV1Api,
  KubeConfig,
  type KubernetesObject,
  loadAllYaml,
  StorageV1Api,
  type V1PersistentVolume,
} from '@kubernetes/client-node';
import {
  type CaseObservation,
  matrixOf,
  type ObservedEntry,
  observeVolume,
  probeFile,
  pvPlaceholder,
  type UpstreamCase,
  type UpstreamDialect,
  type UpstreamFixture,
} from './upstream-matrix.ts';

const run = promisify(execFile);
const mountPath = '/persistentvolumes';
const serviceAccountMountPath = '/var/run/secrets/kubernetes.io/serviceaccount';
const nfsPath = '/export';
const namespace = 'nfs-upstream';

const { values } = parseArgs({
  options: {
    checkout: { type: 'string' },
    label: { type: 'string' },
    out: { type: 'string' },
    binary: { type: 'string' },
    commit: { type: 'string' },
    classic: { type: 'boolean', default: false },
    replace: { type: 'string', multiple: true, default: [] },
  },
});
if (values.checkout === undefined || values.label === undefined) {
  process.stderr.write(
    'usage: record-upstream.ts --checkout <upstream source dir> --label <v4.0.2|master> [--out <file>]\n' +
      '         [--binary <prebuilt upstream binary>] [--commit <upstream commit>] [--classic]\n' +
      '         [--replace <module>=<dir>]...\n',
  );
  process.exit(2);
}
const { checkout, label } = values;
const out = values.out ?? join(import.meta.dirname, '..', 'test', 'fixtures', 'upstream', `${label}.json`);
const kubeconfigPath = process.env.TESTENV_KUBECONFIG;
if (kubeconfigPath === undefined) {
  process.stderr.write(
    'TESTENV_KUBECONFIG is not set: run under `node packages/testenv/src/cli.ts exec --`\n',
  );
  process.exit(2);
}

async function build(work: string): Promise<string> {
  const binary = join(work, 'nfs-subdir-external-provisioner');
  const vendored = await lstat(join(checkout, 'vendor')).then(
    () => true,
    () => false,
  );
  const modFlags: string[] = vendored ? ['-mod=vendor'] : [];
  if (values.replace.length > 0) {
    const modfile = join(work, 'go.mod');
    const replaces = values.replace.map((pair) => `replace ${pair.replace('=', ' => ')}\n`).join('');
    await writeFile(modfile, `${await readFile(join(checkout, 'go.mod'), 'utf8')}\n${replaces}`);
    await copyFile(join(checkout, 'go.sum'), join(work, 'go.sum'));
    modFlags.push(`-modfile=${modfile}`, '-mod=mod');
  }
  await run('go', ['build', ...modFlags, '-o', binary, './cmd/nfs-subdir-external-provisioner'], {
    cwd: checkout,
    env: { ...process.env, CGO_ENABLED: '0' },
    maxBuffer: 64 << 20,
  });
  return binary;
}

interface RbacObject extends KubernetesObject {
  rules?: { resources?: string[] }[];
}

/**
 * Upstream's `deploy/rbac.yaml`, moved into our namespace, as `kubectl apply -n` would place it.
 * The classic nfs-client tag's file names no namespace on its Role and ends its ClusterRole with a
 * rule without resources or verbs, which today's API server refuses; that rule granted nothing, so
 * it is dropped (and said so on stderr).
 */
async function upstreamRbac(): Promise<KubernetesObject[]> {
  const objects = loadAllYaml(await readFile(join(checkout, 'deploy', 'rbac.yaml'), 'utf8')) as RbacObject[];
  for (const object of objects) {
    if (object.kind !== 'ClusterRole' && object.kind !== 'ClusterRoleBinding') {
      object.metadata = { ...object.metadata, namespace };
    }
    const rules = object.rules?.filter((rule) => (rule.resources ?? []).length > 0);
    if (rules !== undefined && rules.length !== object.rules?.length) {
      process.stderr.write(
        `record-upstream: dropped an empty rule from ${object.kind} ${object.metadata?.name}\n`,
      );
      object.rules = rules;
    }
  }
  const text = JSON.stringify(objects).replaceAll('"namespace":"default"', `"namespace":"${namespace}"`);
  return [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } }, ...JSON.parse(text)];
}

async function snapshot(root: string): Promise<Map<string, ObservedEntry>> {
  const entries = new Map<string, ObservedEntry>();
  for (const path of await readdir(root, { recursive: true })) {
    const stats = await lstat(join(root, path));
    const mode = `0${(stats.mode & 0o7777).toString(8)}`;
    entries.set(path, { path, type: stats.isDirectory() ? 'directory' : 'file', mode });
  }
  return entries;
}

/** Entries new or changed since `before`, with the PV name replaced. */
function added(before: Map<string, ObservedEntry>, after: Map<string, ObservedEntry>, pvName: string) {
  return [...after.values()]
    .filter((entry) => JSON.stringify(before.get(entry.path)) !== JSON.stringify(entry))
    .map((entry) => ({ ...entry, path: entry.path.replaceAll(pvName, pvPlaceholder) }))
    .sort((a, b) => a.path.localeCompare(b.path));
}

async function recordCase(admin: KubeConfig, exportDir: string, provisioner: string, c: UpstreamCase) {
  const core = admin.makeApiClient(CoreV1Api);
  const className = `nfs-${c.name}`;
  await core.createNamespace({ body: { metadata: { name: c.namespace } } });
  await admin.makeApiClient(StorageV1Api).createStorageClass({
    body: {
      metadata: { name: className },
      provisioner,
      reclaimPolicy: 'Delete',
      parameters: { ...c.parameters },
      ...(c.mountOptions === undefined ? {} : { mountOptions: [...c.mountOptions] }),
    },
  });
  const before = await snapshot(exportDir);
  await core.createNamespacedPersistentVolumeClaim({
    namespace: c.namespace,
    body: {
      metadata: { name: c.name, labels: { ...c.labels }, annotations: { ...c.annotations } },
      spec: {
        storageClassName: className,
        accessModes: ['ReadWriteMany'],
        resources: { requests: { storage: '1Gi' } },
      },
    },
  });
  const provisionFailure = values.classic ? await premadeVolume(admin, exportDir, provisioner, c) : undefined;
  const pv: V1PersistentVolume = await waitFor(
    async () => {
      const claim = await core.readNamespacedPersistentVolumeClaim({ namespace: c.namespace, name: c.name });
      const name = claim.status?.phase === 'Bound' ? claim.spec?.volumeName : undefined;
      return name === undefined ? undefined : core.readPersistentVolume({ name });
    },
    { timeoutMs: 90_000, description: `claim ${c.namespace}/${c.name} to be Bound` },
  );
  const pvName = pv.metadata?.name ?? '';
  const relative = relativePath(nfsPath, pv.spec?.nfs?.path ?? '') || '.';
  const probe = join(exportDir, relative, probeFile);
  await writeFile(probe, 'probe\n');
  await chmod(probe, 0o644);
  const provisioned = added(before, await snapshot(exportDir), pvName);
  await deleteClaimAndVolume(admin, pv);
  const after = await snapshot(exportDir);
  const deleted = added(before, after, pvName);
  const volume = provisionFailure === undefined ? { volume: observeVolume(pv) } : { provisionFailure };
  return {
    case: c.name,
    pvPath: relative.replaceAll(pvName, pvPlaceholder),
    ...volume,
    provisioned,
    deleted,
  };
}

/** What the binary has logged so far. */
let output = '';

/**
 * `--classic`: the classic nfs-client cannot provision on API servers without `selfLink` (Kubernetes
 * 1.20 and later). Waits for the log line saying so for the claim, then does what its Provision and
 * controller library did on older clusters, from its source (nfs-client/cmd/nfs-client-provisioner,
 * lib/controller at tag nfs-client-provisioner-v3.1.0-k8s1.11): the directory `<ns>-<pvc>-<pv>`, mode
 * 0777, and a PV bound to the claim, annotated with the provisioner and the class, so that the
 * binary's Delete of it can be recorded. Returns the log line, without its klog header.
 */
async function premadeVolume(admin: KubeConfig, exportDir: string, provisioner: string, c: UpstreamCase) {
  const line = new RegExp(`provision "${c.namespace}/${c.name}"[^\\n]*error[^\\n]*`, 'u');
  const failure = await waitFor(async () => line.exec(output)?.[0], {
    timeoutMs: 30_000,
    description: `the classic provisioner to report why it cannot provision ${c.namespace}/${c.name}`,
  });
  const core = admin.makeApiClient(CoreV1Api);
  const claim = await core.readNamespacedPersistentVolumeClaim({ namespace: c.namespace, name: c.name });
  const uid = claim.metadata?.uid ?? '';
  const pvName = `pvc-${uid}`;
  const dir = `${c.namespace}-${c.name}-${pvName}`;
  await mkdir(join(exportDir, dir));
  await chmod(join(exportDir, dir), 0o777);
  const className = `nfs-${c.name}`;
  await core.createPersistentVolume({
    body: {
      metadata: {
        name: pvName,
        annotations: {
          'pv.kubernetes.io/provisioned-by': provisioner,
          'volume.beta.kubernetes.io/storage-class': className,
        },
      },
      spec: {
        capacity: { storage: '1Gi' },
        accessModes: ['ReadWriteMany'],
        persistentVolumeReclaimPolicy: 'Delete',
        storageClassName: className,
        nfs: { server: '127.0.0.1', path: `${nfsPath}/${dir}` },
        claimRef: { namespace: c.namespace, name: c.name, uid },
      },
    },
  });
  return failure;
}

/**
 * The files a pod's ServiceAccount volume holds, for `rest.InClusterConfig()`: the classic
 * nfs-client knows no other way to reach the API, and nfs-subdir uses it when `KUBECONFIG` is unset,
 * as in upstream's Deployment.
 */
async function podServiceAccountVolume(kubeConfig: KubeConfig, dir: string): Promise<string> {
  const token = kubeConfig.getCurrentUser()?.token;
  const ca = kubeConfig.getCurrentCluster()?.caData;
  if (token === undefined || ca === undefined)
    throw new Error('the ServiceAccount kubeconfig lacks a token or CA');
  await mkdir(dir);
  await writeFile(join(dir, 'token'), token);
  await writeFile(join(dir, 'ca.crt'), Buffer.from(ca, 'base64'));
  await writeFile(join(dir, 'namespace'), namespace);
  return dir;
}

const work = await mkdtemp(join(tmpdir(), 'record-upstream-'));
const exportDir = join(work, 'export');
await mkdir(exportDir);
await mkdir(mountPath, { recursive: true });
const binary = values.binary ?? (await build(work));
const admin = new KubeConfig();
admin.loadFromFile(kubeconfigPath);
await applyManifests(admin, await upstreamRbac());
const account = await mintServiceAccountKubeconfig(
  admin,
  { namespace, name: 'nfs-client-provisioner' },
  join(work, 'kubeconfig'),
);
const serviceAccountDir = await podServiceAccountVolume(account.kubeConfig, join(work, 'serviceaccount'));
await mkdir(serviceAccountMountPath, { recursive: true });
const apiServer = new URL(account.kubeConfig.getCurrentCluster()?.server ?? '');
const provisionerName = `upstream.example.com/nfs-${label.replaceAll('.', '-')}`;
const dialect: UpstreamDialect = values.classic ? 'nfs-client' : 'nfs-subdir';
const upstream = await startProgram({
  command: 'unshare',
  args: [
    '--mount',
    '--propagation',
    'private',
    'sh',
    '-c',
    // A container runtime starts the pod's process with umask 022; the caller's may differ.
    `umask 022 && mount --bind "$0" ${mountPath} && mount --bind "$1" ${serviceAccountMountPath} && exec "$2"`,
    exportDir,
    serviceAccountDir,
    binary,
  ],
  env: {
    PATH: process.env.PATH,
    NFS_SERVER: '127.0.0.1',
    NFS_PATH: nfsPath,
    PROVISIONER_NAME: provisionerName,
    KUBERNETES_SERVICE_HOST: apiServer.hostname,
    KUBERNETES_SERVICE_PORT: apiServer.port || '443',
    POD_NAMESPACE: namespace,
  },
  onOutput: (text) => {
    output += text;
    process.stderr.write(text);
  },
});
const observations: CaseObservation[] = [];
try {
  for (const c of matrixOf(dialect))
    observations.push(await recordCase(admin, exportDir, provisionerName, c));
} finally {
  await upstream.stop();
}
const commit =
  values.commit ??
  (await run('git', ['-C', checkout, 'rev-parse', 'HEAD']).then(
    ({ stdout }) => stdout.trim(),
    () => 'an unknown commit',
  ));
const { stdout: goVersion } = await run('go', ['version', binary]);
const classicNote = values.classic
  ? '; it cannot provision on this API server (provisionFailure), so each provisioned layout and PV were made by the recorder as its source says and only deleted is its doing'
  : '';
const fixture: UpstreamFixture = {
  upstream: label,
  dialect,
  source: 'recorded',
  provenance: `recorded by scripts/record-upstream.ts from ${label} at ${commit}, binary built with ${goVersion.trim().split(': ').at(-1)}, on ${new Date().toISOString()}${classicNote}`,
  observations,
};
await writeFile(out, `${JSON.stringify(fixture, null, 2)}\n`);
process.stdout.write(`wrote ${out}\n`);
