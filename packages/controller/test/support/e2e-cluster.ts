/**
 * What every end-to-end test file of this package needs from the real control plane: the testenv
 * handle, {@link KubeApiClient}s on its admin kubeconfig (closed after the file), and waiting for a
 * condition with a deadline instead of sleeping.
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

/**
 * Polls `condition` every `intervalMs` until it returns true, rejecting with `description` once
 * `timeoutMs` has passed. Errors thrown by `condition` count as "not yet".
 */
export async function waitUntil(
  condition: () => boolean | Promise<boolean>,
  options: { timeoutMs: number; description: string; intervalMs?: number },
): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      if (await condition()) return;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() >= deadline) {
      const because = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
      throw new Error(`timed out after ${options.timeoutMs} ms waiting for ${options.description}${because}`);
    }
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 50));
  }
}
