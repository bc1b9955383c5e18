/**
 * The cluster as a test file sees it, and the names and ServiceAccounts tests make in it: shared by
 * the test helpers of `./testing.ts` and the guest's NFS provisioners, which `./testing.ts` re-exports.
 */
import { randomBytes } from 'node:crypto';
import type { KubeConfig, V1Node } from '@kubernetes/client-node';
import type { ControlPlane } from './control-plane.ts';
import type { FakeNodeOptions } from './fake-node.ts';
import { applyManifests, renderKustomization } from './manifests.ts';
import type {
  ServiceAccountKubeconfig,
  ServiceAccountKubeconfigOptions,
} from './service-account-kubeconfig.ts';

/** The cluster as seen from one test file. */
export interface TestEnv {
  /** Admin kubeconfig file. */
  readonly kubeconfigPath: string;
  /** Admin client configuration. */
  readonly kubeConfig: KubeConfig;
  /** Creates a namespace with a unique name starting with `prefix`; deleted after the file's tests. */
  namespace(prefix?: string): Promise<string>;
  /** Creates a fake Ready Node (unique name unless given); deleted after the file's tests. */
  createNode(options?: FakeNodeOptions & { readonly name?: string }): Promise<V1Node>;
  /** Mints a kubeconfig for a ServiceAccount (created if missing) via the TokenRequest API. */
  serviceAccountKubeconfig(options: ServiceAccountKubeconfigOptions): Promise<ServiceAccountKubeconfig>;
  /**
   * The control plane, for fault hooks (restart kube-apiserver, compact etcd, stop the scheduler…).
   * Rejects on an existing cluster that kube-testenv did not start.
   */
  controlPlane(): Promise<ControlPlane>;
}

/** A DNS-1123 name: `prefix-` and eight random hex digits. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${randomBytes(4).toString('hex')}`;
}

const rbacKinds = new Set([
  'Namespace',
  'ServiceAccount',
  'ClusterRole',
  'ClusterRoleBinding',
  'Role',
  'RoleBinding',
]);

/** A deployment's ServiceAccount, with a kubeconfig that authenticates as it. */
export interface DeploymentAccount {
  readonly kubeconfigPath: string;
  readonly namespace: string;
  readonly name: string;
}

/**
 * Applies the RBAC of a kustomization (its Namespace, ServiceAccount, roles and bindings; nothing
 * else) and mints a kubeconfig for its ServiceAccount, so a provisioner under test runs with exactly
 * the permissions the deployment ships.
 */
export async function deploymentAccount(env: TestEnv, deployDir: string): Promise<DeploymentAccount> {
  const objects = await renderKustomization(deployDir);
  await applyManifests(
    env.kubeConfig,
    objects.filter((object) => rbacKinds.has(object.kind ?? '')),
  );
  const account = objects.find((object) => object.kind === 'ServiceAccount')?.metadata;
  if (!account?.name || !account.namespace) throw new Error(`${deployDir} has no namespaced ServiceAccount`);
  const { kubeconfigPath } = await env.serviceAccountKubeconfig({
    namespace: account.namespace,
    name: account.name,
  });
  return { kubeconfigPath, namespace: account.namespace, name: account.name };
}
