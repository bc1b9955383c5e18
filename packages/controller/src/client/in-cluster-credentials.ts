/**
 * The pod's own service account, as client-go's `rest.InClusterConfig` and client-node's
 * `loadFromCluster` read it: the server from `KUBERNETES_SERVICE_HOST` and `KUBERNETES_SERVICE_PORT`,
 * the cluster CA and the token from the service-account volume. The token file is read again on
 * every {@link ClusterCredentials.headers} call (the connection caches headers for a minute, as
 * client-go re-reads it), so a rotated projected token is picked up.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { isIPv6 } from 'node:net';
import { join } from 'node:path';
import { type ClusterCredentials, keepAlivePool } from './cluster-credentials.ts';

/** Where Kubernetes mounts a pod's service-account token, CA and namespace. */
export const serviceAccountDir = '/var/run/secrets/kubernetes.io/serviceaccount';

/** Inputs of {@link inClusterCredentials}; defaults are the process's. */
export interface InClusterSource {
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** The service-account directory. Default {@link serviceAccountDir}. */
  readonly directory?: string;
}

/** Whether this process runs in a pod with a service-account token. */
export function inClusterTokenExists(directory: string = serviceAccountDir): boolean {
  return existsSync(join(directory, 'token'));
}

/** The pod's service-account credentials. Throws when the service environment variables are missing. */
export function inClusterCredentials(source: InClusterSource = {}): ClusterCredentials {
  const env = source.env ?? process.env;
  const directory = source.directory ?? serviceAccountDir;
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (!host || !port) {
    throw new Error(
      'not running in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set (give a kubeconfig instead)',
    );
  }
  // client-node's choice of scheme for the well-known plain-HTTP ports.
  const scheme = port === '80' || port === '8080' || port === '8001' ? 'http' : 'https';
  const server = `${scheme}://${isIPv6(host) ? `[${host}]` : host}:${port}`;
  return {
    server,
    proxied: false,
    async tls() {
      return { ca: await readFile(join(directory, 'ca.crt')) };
    },
    async headers() {
      const token = (await readFile(join(directory, 'token'), 'utf8')).trim();
      return { authorization: `Bearer ${token}` };
    },
    dispatcher: keepAlivePool,
  };
}
