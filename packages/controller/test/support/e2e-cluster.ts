/**
 * What every end-to-end test file of this package needs from the real control plane: the testenv
 * handle and {@link KubeApiClient}s on its admin kubeconfig (closed after the file).
 */
import { type TestEnv, useTestEnv } from '@kube-provisioner/testenv/testing';
import { afterAll } from 'vitest';
import { createKubeApi, type KubeApiClient, type KubeApiOptions } from '../../src/client/kube-api.ts';

/** The testenv handle and API clients for one test file. */
export interface E2eCluster {
  readonly env: TestEnv;
  /**
   * A new admin client with its own connections, closed after the file. Unthrottled unless
   * `options.rateLimit` says otherwise: the limiter has its own unit tests.
   */
  client(options?: KubeApiOptions): KubeApiClient;
}

/** Connects the calling test file to the cluster. Call once per file, outside tests. */
export function useE2eCluster(): E2eCluster {
  const env = useTestEnv();
  const clients: KubeApiClient[] = [];
  afterAll(() => Promise.all(clients.map((client) => client.close())));
  return {
    env,
    client(options = {}) {
      const client = createKubeApi(env.kubeConfig, { rateLimit: { qps: Infinity, burst: 1 }, ...options });
      clients.push(client);
      return client;
    },
  };
}
