/**
 * End-to-end: an operator swaps upstream's image for ours but keeps upstream's RBAC, whose
 * leader-election Role grants `endpoints` only (nfs-subdir-external-provisioner's chart 4.0.18, as
 * recorded in examples/nfs/test/fixtures/upstream-chart-facts.json). The provisioner must not work
 * without its Lease, must say why in its log with the rule to grant, and must fail `/readyz` so the
 * rollout stops; granting that rule must be enough to recover, without a restart.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  applyManifests,
  type RunningProgram,
  startProgram,
  waitFor,
  workspaceBinCommand,
} from '@kube-provisioner/testenv';
import { freePorts } from '@kube-provisioner/testenv/internal';
import { uniqueName, useTestEnv } from '@kube-provisioner/testenv/testing';
import type { KubernetesObject, V1PolicyRule } from '@kubernetes/client-node';
import { afterAll, describe, expect, it } from 'vitest';

const env = useTestEnv();
const packageDir = join(import.meta.dirname, '..');
const factsFile = join(
  packageDir,
  '..',
  '..',
  'examples',
  'nfs',
  'test',
  'fixtures',
  'upstream-chart-facts.json',
);
const cleanups: Array<() => Promise<unknown>> = [];

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

interface RecordedObject {
  readonly kind: string;
  readonly rules?: V1PolicyRule[];
}

/** The rules of upstream's default release: its ClusterRole and its leader-locking Role. */
async function upstreamRules(): Promise<{ cluster: V1PolicyRule[]; leaderLocking: V1PolicyRule[] }> {
  const facts = JSON.parse(await readFile(factsFile, 'utf8')) as { cases: { default: RecordedObject[] } };
  const rulesOf = (kind: string) => facts.cases.default.find((object) => object.kind === kind)?.rules ?? [];
  return { cluster: rulesOf('ClusterRole'), leaderLocking: rulesOf('Role') };
}

/** Upstream's grants for ServiceAccount `account` in `namespace`, under names unique to this run. */
function upstreamGrants(
  namespace: string,
  account: string,
  rules: Awaited<ReturnType<typeof upstreamRules>>,
) {
  const runner = uniqueName('nfs-subdir-external-provisioner-runner');
  const subjects = [{ kind: 'ServiceAccount', name: account, namespace }];
  const objects: KubernetesObject[] = [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: account, namespace } },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: runner },
      rules: rules.cluster,
    } as KubernetesObject,
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: runner },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: runner },
      subjects,
    } as KubernetesObject,
    roleWithBinding(
      namespace,
      'leader-locking-nfs-subdir-external-provisioner',
      rules.leaderLocking,
      subjects,
    ),
  ].flat();
  return objects;
}

function roleWithBinding(
  namespace: string,
  name: string,
  rules: V1PolicyRule[],
  subjects: { kind: string; name: string; namespace: string }[],
): KubernetesObject[] {
  return [
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name, namespace },
      rules,
    } as KubernetesObject,
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name, namespace },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
      subjects,
    } as KubernetesObject,
  ];
}

/** The message of the first JSON log line saying the Lease is forbidden. */
function forbiddenLine(output: string): string | undefined {
  for (const text of output.split('\n')) {
    try {
      const { msg } = JSON.parse(text) as { msg?: unknown };
      if (typeof msg === 'string' && /^forbidden to \w+ leases\.coordination\.k8s\.io/u.test(msg)) return msg;
    } catch {
      // Not a log line.
    }
  }
  return undefined;
}

async function readiness(port: number): Promise<{ status: number; body: string } | undefined> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/readyz?verbose`);
    return { status: response.status, body: await response.text() };
  } catch {
    return undefined;
  }
}

describe('nfs-subdir-provisioner under upstream RBAC (Lease not granted)', () => {
  it('logs the rule to grant, fails /readyz, and recovers once the Lease rule is granted', async () => {
    const namespace = await env.namespace('upstream-rbac');
    const account = 'nfs-subdir-external-provisioner';
    const rules = await upstreamRules();
    expect(rules.leaderLocking.flatMap((rule) => rule.resources ?? [])).toEqual(['endpoints']);
    await applyManifests(env.kubeConfig, upstreamGrants(namespace, account, rules));
    const credentials = await env.serviceAccountKubeconfig({ namespace, name: account });
    const root = await mkdtemp(join(tmpdir(), 'upstream-rbac-'));
    cleanups.push(() => rm(root, { recursive: true, force: true }));
    const [port = 0] = await freePorts(1);
    const cli = workspaceBinCommand(packageDir, 'nfs-subdir-provisioner');
    const program: RunningProgram = await startProgram({
      command: cli.command,
      args: [...cli.args, '--mount-root', root],
      env: {
        PATH: process.env.PATH ?? '',
        NFS_SERVER: '127.0.0.1',
        NFS_PATH: '/export',
        PROVISIONER_NAME: `cluster.local/${uniqueName('nfs-subdir-external-provisioner')}`,
        POD_NAMESPACE: namespace,
        KUBECONFIG: credentials.kubeconfigPath,
        METRICS_PORT: String(port),
      },
    });
    let stopped = false;
    cleanups.push(async () => stopped || program.stop());

    const line = await waitFor(() => forbiddenLine(program.output()), {
      timeoutMs: 60_000,
      description: 'the log line about the forbidden Lease',
    });
    expect(line).toContain(`in namespace "${namespace}"`);
    expect(line).toContain('resources: ["leases"], verbs: ["get", "create", "update"]');
    const denied = await waitFor(
      async () => {
        const answer = await readiness(port);
        return answer !== undefined && answer.status !== 200 ? answer : undefined;
      },
      { timeoutMs: 30_000, description: '/readyz to fail' },
    );
    expect(denied.body).toContain('leases.coordination.k8s.io');
    expect(program.output()).not.toContain('Started provisioner controller');

    // The fix the log line names: a Role with that rule, bound to the same account.
    await applyManifests(
      env.kubeConfig,
      roleWithBinding(
        namespace,
        'leader-locking-leases',
        [{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update'] }],
        [{ kind: 'ServiceAccount', name: account, namespace }],
      ),
    );
    await program.waitForOutput(/Started provisioner controller/u, 90_000);
    await waitFor(async () => (await readiness(port))?.status === 200, {
      timeoutMs: 30_000,
      description: '/readyz to pass once the Lease is granted',
    });
    stopped = true;
    expect(await program.stop()).toBe(0);
  });
});
