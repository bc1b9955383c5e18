/**
 * The credentials kubectl would use, in client-node's `loadFromDefault` order: the files of
 * `KUBECONFIG`, else `~/.kube/config`, else the pod's service account. client-node is imported
 * only for a kubeconfig file, so a provisioner running in its pod never loads it.
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { type ClusterCredentials, kubeConfigCredentials } from './cluster-credentials.ts';
import {
  type InClusterSource,
  inClusterCredentials,
  inClusterTokenExists,
} from './in-cluster-credentials.ts';

/** Inputs of {@link defaultCredentials}; defaults are the process's. */
export interface DefaultSource extends InClusterSource {
  /** The home directory holding `.kube/config`. */
  readonly home?: string;
}

/** Resolves the default credentials; rejects when there is no kubeconfig and no service account. */
export async function defaultCredentials(source: DefaultSource = {}): Promise<ClusterCredentials> {
  const env = source.env ?? process.env;
  const homeConfig = join(source.home ?? homedir(), '.kube', 'config');
  const listed = (env.KUBECONFIG ?? '').split(delimiter).filter((file) => file !== '');
  const files = listed.length > 0 ? listed : existsSync(homeConfig) ? [homeConfig] : [];
  if (files.length > 0) return kubeconfigFileCredentials(files);
  if (inClusterTokenExists(source.directory)) return inClusterCredentials(source);
  throw new Error(
    `no cluster configured: set KUBECONFIG, create ${homeConfig}, or run in a pod with a service account`,
  );
}

/**
 * The credentials of the current context of kubeconfig `files`, merged as kubectl merges the files
 * of `KUBECONFIG`: the first file that names a current context wins (client-node's own
 * `loadFromDefault` lets the last one win).
 */
export async function kubeconfigFileCredentials(files: readonly string[]): Promise<ClusterCredentials> {
  const { KubeConfig } = await import('@kubernetes/client-node');
  const kubeConfig = new KubeConfig();
  for (const [index, file] of files.entries()) {
    if (index === 0) kubeConfig.loadFromFile(file);
    else {
      const more = new KubeConfig();
      more.loadFromFile(file);
      kubeConfig.mergeConfig(more, Boolean(kubeConfig.getCurrentContext()));
    }
  }
  return kubeConfigCredentials(kubeConfig);
}
