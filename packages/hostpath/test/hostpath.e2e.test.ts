// biome-ignore-all lint/suspicious/noTemplateCurlyInString: pathPattern placeholders are literal text, not JS templates
/**
 * End-to-end: the real `kube-hostpath-provisioner` binary against a real control plane, running
 * under the shipped RBAC through a ServiceAccount kubeconfig. Two fake Nodes, one per-node process
 * each (own temporary root), then a shared-mode process with leader election.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { finalizerPV } from '@kube-provisioner/controller/wire-names';
import {
  applyManifests,
  type RunningProgram,
  startProgram,
  waitFor,
  workspaceBinCommand,
} from '@kube-provisioner/testenv';
import { uniqueName, useTestEnv } from '@kube-provisioner/testenv/testing';
import {
  AuthorizationV1Api,
  CoreV1Api,
  type KubernetesObject,
  loadAllYaml,
  StorageV1Api,
  type V1PersistentVolume,
  type V1PersistentVolumeClaim,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { annProvisionerIdentity } from '../src/persistent-volume.ts';
import { clusterRules, namespaceRules, type PolicyRule } from '../src/rbac-rules.ts';

const env = useTestEnv();
const core = env.kubeConfig.makeApiClient(CoreV1Api);
const storage = env.kubeConfig.makeApiClient(StorageV1Api);
const packageDir = join(import.meta.dirname, '..');
const systemNamespace = 'kube-provisioner-hostpath';
const timeoutMs = 90_000;

interface RunningProvisioner {
  /** Its own temporary `--root`. */
  readonly root: string;
  readonly program: RunningProgram;
}

const running: RunningProvisioner[] = [];

async function startProvisioner(args: string[], kubeconfigPath: string): Promise<RunningProvisioner> {
  const root = await mkdtemp(join(tmpdir(), 'hostpath-e2e-'));
  const cli = workspaceBinCommand(packageDir, 'kube-hostpath-provisioner');
  const program = await startProgram({
    command: cli.command,
    args: [...cli.args, ...args, '--root', root],
    env: {
      PATH: process.env.PATH ?? '',
      KUBECONFIG: kubeconfigPath,
      HEALTH_PORT: '0',
      POD_NAMESPACE: systemNamespace,
    },
  });
  const provisioner = { root, program };
  running.push(provisioner);
  return provisioner;
}

function claimBody(
  name: string,
  storageClassName: string,
  accessModes = ['ReadWriteOnce'],
): V1PersistentVolumeClaim {
  return {
    metadata: { name },
    spec: { storageClassName, accessModes, resources: { requests: { storage: '1Gi' } } },
  };
}

async function boundVolumes(namespace: string, count: number): Promise<V1PersistentVolume[]> {
  return waitFor(
    async () => {
      const claims = await core.listNamespacedPersistentVolumeClaim({ namespace });
      const bound = claims.items.filter((claim) => claim.status?.phase === 'Bound');
      if (bound.length < count) return undefined;
      return Promise.all(
        bound.map((claim) => core.readPersistentVolume({ name: claim.spec?.volumeName ?? '' })),
      );
    },
    { timeoutMs, description: `${count} bound claims in ${namespace}` },
  );
}

async function volumesGone(names: readonly string[]): Promise<void> {
  await waitFor(
    async () => {
      const volumes = await core.listPersistentVolume();
      return !volumes.items.some((pv) => names.includes(pv.metadata?.name ?? ''));
    },
    { timeoutMs, description: 'the volumes to be deleted' },
  );
}

async function deleteAll(namespace: string): Promise<void> {
  await core.deleteCollectionNamespacedPod({ namespace, gracePeriodSeconds: 0 });
  await core.deleteCollectionNamespacedPersistentVolumeClaim({ namespace });
}

function expectNoForbidden(provisioner: RunningProvisioner): void {
  expect(provisioner.program.output()).not.toMatch(/forbidden|"statusCode":403/i);
}

beforeAll(async () => {
  const rbac = await readFile(join(packageDir, 'deploy', 'rbac.yaml'), 'utf8');
  await applyManifests(env.kubeConfig, loadAllYaml(rbac) as KubernetesObject[]);
});

afterAll(async () => {
  await Promise.all(
    running.map(async ({ root, program }) => {
      await program.stop();
      await rm(root, { recursive: true, force: true });
    }),
  );
});

describe('shipped RBAC', () => {
  it('grants the ServiceAccount every verb of the table and no pod creation', async () => {
    const account = await env.serviceAccountKubeconfig({
      namespace: systemNamespace,
      name: 'hostpath-provisioner',
    });
    const authorization = account.kubeConfig.makeApiClient(AuthorizationV1Api);
    const allowed = async (
      rule: PolicyRule,
      resource: string,
      verb: string,
      namespace?: string,
    ): Promise<boolean> => {
      const review = await authorization.createSelfSubjectAccessReview({
        body: {
          spec: {
            resourceAttributes: {
              group: rule.apiGroups[0] ?? '',
              resource,
              verb,
              ...(namespace ? { namespace } : {}),
            },
          },
        },
      });
      return review.status?.allowed === true;
    };
    for (const [rules, namespace] of [
      [clusterRules, undefined],
      [namespaceRules, systemNamespace],
    ] as const) {
      for (const rule of rules) {
        for (const resource of rule.resources) {
          for (const verb of rule.verbs) {
            expect(await allowed(rule, resource, verb, namespace), `${verb} ${resource}`).toBe(true);
          }
        }
      }
    }
    const pods: PolicyRule = { apiGroups: [''], resources: ['pods'], verbs: ['create'] };
    expect(await allowed(pods, 'pods', 'create', systemNamespace)).toBe(false);
    expect(await allowed(pods, 'secrets', 'get', systemNamespace)).toBe(false);
  });
});

describe('per-node mode on two nodes', () => {
  it('binds 50 WaitForFirstConsumer claims on the right node and deletes exactly their directories', async () => {
    const provisionerName = `e2e.kube-provisioner.io/${uniqueName('hostpath')}`;
    const className = uniqueName('hostpath-wffc');
    const namespace = await env.namespace('hostpath');
    const nodes = [await env.createNode(), await env.createNode()].map((node) => node.metadata?.name ?? '');
    const account = await env.serviceAccountKubeconfig({
      namespace: systemNamespace,
      name: 'hostpath-provisioner',
    });
    const instances = await Promise.all(
      nodes.map((node) =>
        startProvisioner(
          ['--mode', 'per-node', '--node-name', node, '--provisioner-name', provisionerName],
          account.kubeconfigPath,
        ),
      ),
    );
    await storage.createStorageClass({
      body: {
        metadata: { name: className },
        provisioner: provisionerName,
        volumeBindingMode: 'WaitForFirstConsumer',
        reclaimPolicy: 'Delete',
      },
    });

    const nodeOfClaim = new Map<string, string>();
    await Promise.all(
      Array.from({ length: 50 }, async (_, index) => {
        const name = `data-${index}`;
        const node = nodes[index % 2] ?? '';
        nodeOfClaim.set(name, node);
        await core.createNamespacedPersistentVolumeClaim({ namespace, body: claimBody(name, className) });
        await core.createNamespacedPod({
          namespace,
          body: {
            metadata: { name: `pod-${index}` },
            spec: {
              nodeSelector: { 'kubernetes.io/hostname': node },
              containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }],
              volumes: [{ name: 'data', persistentVolumeClaim: { claimName: name } }],
            },
          },
        });
      }),
    );

    const volumes = await boundVolumes(namespace, 50);
    expect(volumes).toHaveLength(50);
    for (const pv of volumes) {
      const node = nodeOfClaim.get(pv.spec?.claimRef?.name ?? '') ?? '';
      const index = nodes.indexOf(node);
      const [own, other] = [instances[index], instances[1 - index]];
      const path = pv.spec?.hostPath?.path ?? '';
      expect(pv.spec?.hostPath?.type).toBe('Directory');
      expect(pv.metadata?.annotations?.[annProvisionerIdentity]).toBe(node);
      expect(pv.spec?.nodeAffinity?.required?.nodeSelectorTerms[0]?.matchExpressions).toEqual([
        { key: 'kubernetes.io/hostname', operator: 'In', values: [node] },
      ]);
      expect(path.startsWith(`${own?.root}/`)).toBe(true);
      expect(existsSync(path)).toBe(true);
      expect(existsSync(join(other?.root ?? '', pv.metadata?.name ?? ''))).toBe(false);
    }

    await deleteAll(namespace);
    await volumesGone(volumes.map((pv) => pv.metadata?.name ?? ''));
    for (const instance of instances) {
      expect(await readdir(instance.root)).toEqual([]);
      expectNoForbidden(instance);
    }
    await storage.deleteStorageClass({ name: className });
  });
});

describe('shared mode', () => {
  it('provisions Immediate claims without node affinity and explains a bad parameter', async () => {
    const provisionerName = `e2e.kube-provisioner.io/${uniqueName('shared')}`;
    const [goodClass, badClass] = [uniqueName('hostpath-shared'), uniqueName('hostpath-typo')];
    const namespace = await env.namespace('hostpath-shared');
    const account = await env.serviceAccountKubeconfig({
      namespace: systemNamespace,
      name: 'hostpath-provisioner',
    });
    const instance = await startProvisioner(
      ['--mode', 'shared', '--provisioner-name', provisionerName],
      account.kubeconfigPath,
    );
    for (const [name, parameters] of [
      [goodClass, { pathPattern: '${.PVC.namespace}/${.PVC.name}' }],
      [badClass, { pathPatern: 'x' }],
    ] as const) {
      await storage.createStorageClass({
        body: {
          metadata: { name },
          provisioner: provisionerName,
          volumeBindingMode: 'Immediate',
          reclaimPolicy: 'Delete',
          parameters,
        },
      });
    }
    for (const index of [0, 1, 2]) {
      await core.createNamespacedPersistentVolumeClaim({
        namespace,
        body: claimBody(`shared-${index}`, goodClass, ['ReadWriteMany']),
      });
    }
    await core.createNamespacedPersistentVolumeClaim({ namespace, body: claimBody('typo', badClass) });

    const volumes = await boundVolumes(namespace, 3);
    for (const pv of volumes) {
      // The CLI's default: the deletion-protection finalizer on every PV it makes with reclaim Delete.
      expect(pv.metadata?.finalizers).toContain(finalizerPV);
      expect(pv.spec?.nodeAffinity).toBeUndefined();
      expect(pv.spec?.hostPath?.path).toBe(join(instance.root, namespace, pv.spec?.claimRef?.name ?? ''));
      expect(existsSync(pv.spec?.hostPath?.path ?? '')).toBe(true);
    }
    const event = await waitFor(
      async () => {
        const events = await core.listNamespacedEvent({ namespace });
        return events.items.find(
          (item) => item.reason === 'ProvisioningFailed' && item.involvedObject.name === 'typo',
        );
      },
      { timeoutMs, description: 'a ProvisioningFailed event for the typo' },
    );
    expect(event.message).toContain('unknown parameter "pathPatern"');

    await deleteAll(namespace);
    await volumesGone(volumes.map((pv) => pv.metadata?.name ?? ''));
    expect(await readdir(instance.root)).toEqual([]);
    expectNoForbidden(instance);
    await Promise.all([goodClass, badClass].map((name) => storage.deleteStorageClass({ name })));
  });
});
