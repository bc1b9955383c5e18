import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { ApiException, CoreV1Api, KubeConfig } from '@kubernetes/client-node';

/** Which ServiceAccount to mint a kubeconfig for. */
export interface ServiceAccountKubeconfigOptions {
  readonly namespace: string;
  readonly name: string;
  /** Token lifetime; default one day, longer than any test run. */
  readonly expirationSeconds?: number;
}

/** A kubeconfig that authenticates as a ServiceAccount. */
export interface ServiceAccountKubeconfig {
  /** The file, for a provisioner started as a separate process. */
  readonly kubeconfigPath: string;
  readonly kubeConfig: KubeConfig;
}

const defaultExpirationSeconds = 86_400;

/**
 * Mints a kubeconfig for a ServiceAccount through the TokenRequest API, creating the account if it
 * does not exist, and writes it to `path`. The account must keep existing: the apiserver checks
 * that on every request. Grant it permissions with your own Roles and bindings, so code under test
 * runs under exactly the RBAC rules it ships.
 */
export async function mintServiceAccountKubeconfig(
  admin: KubeConfig,
  options: ServiceAccountKubeconfigOptions,
  path: string,
): Promise<ServiceAccountKubeconfig> {
  const { namespace, name } = options;
  const core = admin.makeApiClient(CoreV1Api);
  try {
    await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name } } });
  } catch (err) {
    if (!(err instanceof ApiException && err.code === 409)) throw err;
  }
  const request = await core.createNamespacedServiceAccountToken({
    namespace,
    name,
    body: {
      spec: { audiences: [], expirationSeconds: options.expirationSeconds ?? defaultExpirationSeconds },
    },
  });
  const token = request.status?.token;
  if (!token) throw new Error(`TokenRequest for ${namespace}/${name} returned no token`);

  const cluster = admin.getCurrentCluster();
  if (!cluster) throw new Error('the admin kubeconfig has no current cluster');
  const user = `system:serviceaccount:${namespace}:${name}`;
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [cluster],
    users: [{ name: user, token }],
    contexts: [{ name: user, cluster: cluster.name, user, namespace }],
    currentContext: user,
  });
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, kubeConfig.exportConfig(), { mode: 0o600 });
  return { kubeconfigPath: path, kubeConfig };
}
