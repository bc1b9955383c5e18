/**
 * The credentials kubectl would use, in client-node's `loadFromDefault` order: the files of
 * `KUBECONFIG`, else `~/.kube/config`, else the pod's service account. Neither source loads
 * client-node unless a kubeconfig's user runs a plugin or its cluster a proxy ({@link kubeconfigFileCredentials}).
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import type { ClusterCredentials } from './cluster-credentials.ts';
import {
  type InClusterSource,
  inClusterCredentials,
  inClusterTokenExists,
} from './in-cluster-credentials.ts';
import { kubeconfigFileCredentials } from './kubeconfig-file.ts';

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
