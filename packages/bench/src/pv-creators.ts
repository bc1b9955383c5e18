/**
 * The bare clients' ways of creating PVs: our client stack, and `node:http2` alone (one session,
 * `JSON.stringify` out and `JSON.parse` back, nothing else: the least any Node.js client does per
 * request, so its CPU per create is the runtime's floor). `bare-client.ts` runs them against a
 * cluster, `client-overhead.ts` against a loopback server.
 */
import { connect } from 'node:http2';
import type { RequestOptions } from 'node:https';
import { createKubeApi } from '@kube-provisioner/controller';
import { resources } from '@kube-provisioner/controller/client';
import type { KubeConfig, V1PersistentVolume } from '@kubernetes/client-node';

/** Sends one create and resolves when it is answered; `close` ends the connection. */
export interface PvCreator {
  readonly warmUp: () => Promise<void>;
  readonly create: (volume: V1PersistentVolume) => Promise<void>;
  readonly close: () => Promise<void>;
}

/** Our client stack with no client-side limit; `create` may be another checkout's `createKubeApi`. */
export function ourClientStack(
  kubeConfig: KubeConfig,
  create: typeof createKubeApi = createKubeApi,
): PvCreator {
  const api = create(kubeConfig, { rateLimit: { qps: Number.POSITIVE_INFINITY, burst: 1 } });
  const volumes = api.resource(resources.persistentVolumes);
  return {
    warmUp: async () => {
      await volumes.list({ limit: 1 });
    },
    create: async (volume) => {
      await volumes.create(volume);
    },
    close: () => api.close(),
  };
}

/** `node:http2` alone, on one session to the kubeconfig's server. */
export async function nodeHttp2(kubeConfig: KubeConfig): Promise<PvCreator> {
  const server = new URL(kubeConfig.getCurrentCluster()?.server ?? '');
  const tls: RequestOptions = {};
  await kubeConfig.applyToHTTPSOptions(tls);
  const session = connect(server.origin, { ca: tls.ca, cert: tls.cert, key: tls.key });
  const headers = { ...(tls.headers as Record<string, string> | undefined), accept: 'application/json' };
  const send = (method: string, path: string, body?: string): Promise<void> =>
    new Promise((resolve, reject) => {
      const stream = session.request({
        ...headers,
        ':method': method,
        ':path': path,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      });
      let status = 0;
      let text = '';
      stream.setEncoding('utf8');
      stream.on('response', (response) => {
        status = Number(response[':status']);
      });
      stream.on('data', (chunk: string) => {
        text += chunk;
      });
      stream.on('error', reject);
      stream.on('end', () => {
        const answer: unknown = JSON.parse(text);
        if (status >= 200 && status < 300) resolve();
        else reject(new Error(`${method} ${path}: ${status} ${JSON.stringify(answer)}`));
      });
      stream.end(body);
    });
  return {
    warmUp: () => send('GET', '/api/v1/persistentvolumes?limit=1'),
    create: (volume) => send('POST', '/api/v1/persistentvolumes', JSON.stringify(volume)),
    close: () => new Promise((resolve) => session.close(() => resolve())),
  };
}
