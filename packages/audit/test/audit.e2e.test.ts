/**
 * End-to-end: `kube-provisioner-audit` as a child process against the real control plane, under a
 * ServiceAccount that may only get and list PVs and PVCs (and list DirectorySnapshots), with its root
 * mounted read-only. A real kube-hostpath-provisioner's volumes audit clean; then every kind of finding
 * is planted beside another provisioner name and each is reported, exactly once, and nothing else.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, rmdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { annDynamicallyProvisioned, finalizerPV } from '@kube-provisioner/controller/wire-names';
import { type DirectorySnapshot, snapshotGroup } from '@kube-provisioner/hostpath';
import { parseRelativeVolumePath, snapshotPath, VolumeRoot } from '@kube-provisioner/safe-fs';
import {
  applyManifests,
  bindClaim,
  deleteClaimAndVolume,
  type RunningProgram,
  startProgram,
  waitFor,
  workspaceBinCommand,
} from '@kube-provisioner/testenv';
import { uniqueName, useTestEnv } from '@kube-provisioner/testenv/testing';
import {
  CoreV1Api,
  CustomObjectsApi,
  type KubernetesObject,
  loadAllYaml,
  PatchStrategy,
  StorageV1Api,
  setHeaderOptions,
  type V1ObjectReference,
  type V1PersistentVolume,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditReport } from '../src/audit.ts';
import { exitClean, exitFindings } from '../src/run-cli.ts';
import { runAuditReadOnly, snapshotTree } from './read-only-run.ts';

const env = useTestEnv();
const core = env.kubeConfig.makeApiClient(CoreV1Api);
const storage = env.kubeConfig.makeApiClient(StorageV1Api);
const custom = env.kubeConfig.makeApiClient(CustomObjectsApi);
const snapshotResource = { group: snapshotGroup, version: 'v1alpha1', plural: 'directorysnapshots' };
const packageDir = join(import.meta.dirname, '..');
const hostpathDir = join(packageDir, '..', 'hostpath');
const roots: string[] = [];
let hostpath: RunningProgram | undefined;
let auditKubeconfig = '';

async function tempRoot(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'audit-e2e-'));
  roots.push(root);
  return root;
}

function auditArgs(provisionerName: string, root: string, output: 'json' | 'table'): string[] {
  return [
    '--kubeconfig',
    auditKubeconfig,
    '--provisioner-name',
    provisionerName,
    '--kind',
    'hostpath',
    '--root',
    root,
    '--grace',
    '0s',
    '--output',
    output,
  ];
}

beforeAll(async () => {
  const rbac = await readFile(join(packageDir, 'deploy', 'rbac.yaml'), 'utf8');
  await applyManifests(env.kubeConfig, loadAllYaml(rbac) as KubernetesObject[]);
  auditKubeconfig = (
    await env.serviceAccountKubeconfig({
      namespace: 'kube-provisioner-audit',
      name: 'kube-provisioner-audit',
    })
  ).kubeconfigPath;
});

afterAll(async () => {
  await hostpath?.stop();
  await Promise.all(roots.map((root) => rm(root, { recursive: true, force: true })));
});

describe('kube-provisioner-audit', () => {
  it('reports a real hostpath provisioner clean, reading nothing but the API and the root', async () => {
    const hostpathRbac = await readFile(join(hostpathDir, 'deploy', 'rbac.yaml'), 'utf8');
    await applyManifests(env.kubeConfig, loadAllYaml(hostpathRbac) as KubernetesObject[]);
    const account = await env.serviceAccountKubeconfig({
      namespace: 'kube-provisioner-hostpath',
      name: 'hostpath-provisioner',
    });
    const root = await tempRoot();
    const provisionerName = `e2e.kube-provisioner.io/${uniqueName('audit-clean')}`;
    const cli = workspaceBinCommand(hostpathDir, 'kube-hostpath-provisioner');
    hostpath = await startProgram({
      command: cli.command,
      args: [...cli.args, '--mode', 'shared', '--root', root, '--provisioner-name', provisionerName],
      env: {
        PATH: process.env.PATH ?? '',
        KUBECONFIG: account.kubeconfigPath,
        HEALTH_PORT: '0',
        POD_NAMESPACE: 'kube-provisioner-hostpath',
      },
    });
    const className = uniqueName('audit-clean');
    await storage.createStorageClass({
      body: { metadata: { name: className }, provisioner: provisionerName, reclaimPolicy: 'Delete' },
    });
    const namespace = await env.namespace('audit');
    const pvs = await Promise.all(
      ['a', 'b', 'c'].map((name) =>
        bindClaim(env.kubeConfig, {
          namespace,
          name,
          storageClassName: className,
          accessModes: ['ReadWriteOnce'],
        }),
      ),
    );
    await deleteClaimAndVolume(env.kubeConfig, pvs[0] as V1PersistentVolume);
    const before = await snapshotTree(root);

    const json = runAuditReadOnly(root, auditArgs(provisionerName, root, 'json'));
    const table = runAuditReadOnly(root, auditArgs(provisionerName, root, 'table'));

    expect(json.stderr).toBe('');
    expect(json.status).toBe(exitClean);
    const report = JSON.parse(json.stdout) as AuditReport;
    expect(report.summary).toEqual({
      persistentVolumes: 2,
      volumeDirectories: 2,
      archived: 0,
      retained: 0,
      findings: 0,
    });
    expect(report.findings).toEqual([]);
    expect(table.status).toBe(exitClean);
    expect(table.stdout).toBe(
      `${provisionerName} on ${root}: 2 PVs, 2 volume directories (0 archived, 0 retained), no findings\n`,
    );
    expect(await snapshotTree(root)).toEqual(before);
  }, 300_000);

  it('reports each planted inconsistency once, and nothing else', async () => {
    const root = await tempRoot();
    const volumeRoot = new VolumeRoot(root);
    const provisionerName = `e2e.kube-provisioner.io/${uniqueName('audit-planted')}`;
    const pvName = (what: string): string => uniqueName(`pvc-${what}`);
    const names = {
      missing: pvName('missing'),
      mismatch: pvName('mismatch'),
      someoneElse: pvName('someone-else'),
      orphan: pvName('orphan'),
      dupA: pvName('dup-a'),
      dupB: pvName('dup-b'),
      stuck: pvName('stuck'),
      released: pvName('released'),
      strayRecord: pvName('stray'),
    };
    const namespace = await env.namespace('audit');
    const directory = async (path: string, owner: string): Promise<void> => {
      await volumeRoot.createVolume(parseRelativeVolumePath(path), {
        owner: {
          claimUid: randomUUID(),
          namespace,
          claimName: path,
          pvName: owner,
          provisioner: provisionerName,
        },
        mode: 0o777,
      });
    };
    const volume = (
      name: string,
      path: string,
      extra: { claimRef?: V1ObjectReference; reclaimPolicy?: string } = {},
    ): V1PersistentVolume => ({
      metadata: {
        name,
        annotations: { [annDynamicallyProvisioned]: provisionerName },
        finalizers: [finalizerPV],
      },
      spec: {
        capacity: { storage: '1Gi' },
        accessModes: ['ReadWriteOnce'],
        hostPath: { path: join(root, path), type: 'Directory' },
        persistentVolumeReclaimPolicy: extra.reclaimPolicy ?? 'Retain',
        ...(extra.claimRef === undefined ? {} : { claimRef: extra.claimRef }),
      },
    });

    // pv-without-directory
    await core.createPersistentVolume({ body: volume(names.missing, 'missing') });
    // pv-directory-mismatch
    await directory('mismatch', names.someoneElse);
    await core.createPersistentVolume({ body: volume(names.mismatch, 'mismatch') });
    // directory-without-pv
    await directory('team/orphan', names.orphan);
    // claim-provisioned-twice: a claim pre-bound to one PV, and a second PV naming the same claim
    const claim = await core.createNamespacedPersistentVolumeClaim({
      namespace,
      body: {
        metadata: { name: 'twice' },
        spec: {
          storageClassName: '',
          volumeName: names.dupA,
          accessModes: ['ReadWriteOnce'],
          resources: { requests: { storage: '1Gi' } },
        },
      },
    });
    const claimRef = {
      kind: 'PersistentVolumeClaim',
      namespace,
      name: 'twice',
      uid: claim.metadata?.uid ?? '',
    };
    // As after a double provisioning: the PV the claim is not bound to is Released by the PV
    // controller (policy Delete) and keeps its claimRef; with Retain it would be unbound instead.
    for (const [name, reclaimPolicy] of [
      [names.dupA, 'Retain'],
      [names.dupB, 'Delete'],
    ] as const) {
      await directory(name, name);
      await core.createPersistentVolume({ body: volume(name, name, { claimRef, reclaimPolicy }) });
    }
    // finalizer-stuck: deleted, but nobody runs for this provisioner name to remove its finalizer
    await core.createPersistentVolume({ body: volume(names.stuck, 'stuck') });
    await core.deletePersistentVolume({ name: names.stuck });
    // released-delete: its claim is gone, so the PV controller releases it, and nobody deletes it
    await directory('released', names.released);
    await core.createPersistentVolume({
      body: volume(names.released, 'released', {
        reclaimPolicy: 'Delete',
        claimRef: { kind: 'PersistentVolumeClaim', namespace, name: 'gone', uid: randomUUID() },
      }),
    });
    // snapshot-without-object, beside a snapshot whose object exists (listed, not reported)
    const crd = await readFile(join(hostpathDir, 'deploy', 'snapshot-crd.yaml'), 'utf8');
    await applyManifests(env.kubeConfig, loadAllYaml(crd) as KubernetesObject[]);
    const live = (await waitFor(
      () =>
        custom
          .createNamespacedCustomObject({
            ...snapshotResource,
            namespace,
            body: {
              apiVersion: `${snapshotGroup}/v1alpha1`,
              kind: 'DirectorySnapshot',
              metadata: { name: 'live' },
              spec: { source: { persistentVolumeClaimName: 'twice' } },
            },
          })
          .catch(() => undefined),
      { timeoutMs: 30_000, description: 'the DirectorySnapshot CRD to be served' },
    )) as DirectorySnapshot;
    const lostUid = randomUUID();
    for (const [name, uid] of [
      ['live', live.metadata?.uid ?? ''],
      ['lost', lostUid],
    ] as const) {
      await volumeRoot.createVolume(snapshotPath(namespace, uid), {
        owner: {
          claimUid: uid,
          namespace,
          claimName: name,
          pvName: `snapshot-${uid}`,
          provisioner: provisionerName,
        },
        mode: 0o700,
      });
    }
    // temporary-file and stray-record
    await writeFile(join(root, 'team', `.kube-provisioner.tmp.${randomUUID()}`), '{}\n');
    await directory('stray', names.strayRecord);
    await rmdir(join(root, 'stray'));

    await waitFor(
      async () => {
        const [released, extra, bound] = await Promise.all([
          core.readPersistentVolume({ name: names.released }),
          core.readPersistentVolume({ name: names.dupB }),
          core.readNamespacedPersistentVolumeClaim({ namespace, name: 'twice' }),
        ]);
        return (
          released.status?.phase === 'Released' &&
          extra.status?.phase === 'Released' &&
          bound.status?.phase === 'Bound'
        );
      },
      { timeoutMs: 60_000, description: 'the PV controller to release two PVs and bind the pre-bound claim' },
    );
    const before = await snapshotTree(root);

    const json = runAuditReadOnly(root, auditArgs(provisionerName, root, 'json'));
    const table = runAuditReadOnly(root, auditArgs(provisionerName, root, 'table'));

    expect(json.stderr).toBe('');
    expect(json.status).toBe(exitFindings);
    const report = JSON.parse(json.stdout) as AuditReport;
    expect(
      report.findings.map(({ kind, pvs, path }) => ({
        kind,
        pvs,
        path: path?.replace(/tmp\.[0-9a-f-]+$/u, 'tmp.*'),
      })),
    ).toEqual([
      { kind: 'pv-without-directory', pvs: [names.missing], path: 'missing' },
      { kind: 'pv-directory-mismatch', pvs: [names.mismatch, names.someoneElse], path: 'mismatch' },
      { kind: 'directory-without-pv', pvs: [names.orphan], path: 'team/orphan' },
      { kind: 'claim-provisioned-twice', pvs: [names.dupA, names.dupB].sort(), path: undefined },
      { kind: 'finalizer-stuck', pvs: [names.stuck], path: undefined },
      { kind: 'released-delete', pvs: [names.dupB], path: undefined },
      { kind: 'released-delete', pvs: [names.released], path: undefined },
      { kind: 'temporary-file', pvs: [], path: 'team/.kube-provisioner.tmp.*' },
      { kind: 'stray-record', pvs: [], path: `.stray.kube-provisioner.json` },
      {
        kind: 'snapshot-without-object',
        pvs: [],
        path: `.kube-provisioner-snapshots/${namespace}/${lostUid}`,
      },
    ]);
    expect(
      report.snapshots
        .map(({ name, source, state }) => ({ name, source, state }))
        .sort((a, b) => a.name.localeCompare(b.name)),
    ).toEqual([
      { name: 'live', source: 'twice', state: 'live' },
      { name: 'lost', source: undefined, state: 'orphaned' },
    ]);
    expect(report.findings.find((finding) => finding.kind === 'claim-provisioned-twice')?.message).toMatch(
      new RegExp(`the claim is bound to ${names.dupA}$`, 'u'),
    );
    expect(table.status).toBe(exitFindings);
    const lines = table.stdout.split('\n');
    expect(lines[0]).toMatch(/: 6 PVs, 5 volume directories \(0 archived, 0 retained\), 10 findings$/u);
    expect(lines.slice(3, 13).map((line) => line.split(/\s+/u)[0])).toEqual(
      report.findings.map((finding) => finding.kind),
    );
    expect(await snapshotTree(root)).toEqual(before);

    // Leave nothing behind for other files: no provisioner runs to remove these PVs' finalizer.
    const planted = [names.missing, names.mismatch, names.dupA, names.dupB, names.stuck, names.released];
    for (const name of planted) {
      await core.patchPersistentVolume(
        { name, body: { metadata: { finalizers: null } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      await core.deletePersistentVolume({ name }).catch(() => undefined);
    }
  }, 300_000);
});
