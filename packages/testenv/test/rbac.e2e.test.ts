import { ApiException, CoreV1Api, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { useTestEnv } from '../src/testing.ts';
import { waitFor } from '../src/wait-for.ts';

const env = useTestEnv();

const statusOf = (call: Promise<unknown>): Promise<number> =>
  call.then(
    () => 200,
    (err: unknown) => {
      if (err instanceof ApiException) return err.code;
      throw err;
    },
  );

describe('RBAC', () => {
  it('forbids a ServiceAccount what its roles do not grant, and allows it once granted', async () => {
    const namespace = await env.namespace('rbac');
    const { kubeConfig, kubeconfigPath } = await env.serviceAccountKubeconfig({
      namespace,
      name: 'provisioner',
    });
    expect(kubeconfigPath).toMatch(/\.yaml$/);
    const asAccount = kubeConfig.makeApiClient(CoreV1Api);

    expect(await statusOf(asAccount.listPersistentVolume())).toBe(403);
    expect(await statusOf(asAccount.listNamespacedConfigMap({ namespace }))).toBe(403);

    const rbac = env.kubeConfig.makeApiClient(RbacAuthorizationV1Api);
    await rbac.createNamespacedRole({
      namespace,
      body: {
        metadata: { name: 'read-configmaps' },
        rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['list'] }],
      },
    });
    await rbac.createNamespacedRoleBinding({
      namespace,
      body: {
        metadata: { name: 'provisioner-reads-configmaps' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'read-configmaps' },
        subjects: [{ kind: 'ServiceAccount', name: 'provisioner', namespace }],
      },
    });
    await waitFor(async () => (await statusOf(asAccount.listNamespacedConfigMap({ namespace }))) === 200, {
      timeoutMs: 10_000,
      description: 'the RoleBinding to take effect',
    });
    expect(await statusOf(asAccount.listPersistentVolume())).toBe(403);
  });
});
