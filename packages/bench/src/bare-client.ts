#!/usr/bin/env node
/**
 * A bare Node.js client in a process of its own, the counterpart of `bench-go create-pvs`: creates
 * `--count` PVs shaped like the JSON PV on standard input, named `<prefix>-<i>`, `--concurrency` in
 * flight with no client-side limit, and prints `{"seconds": …, "cpu_seconds": …}`: the creates' wall
 * time and the whole process's CPU over them (after one warm-up request, as the Go side).
 *
 * `--client=ours` sends them with our client stack (`createKubeApi`); `--client=node-http2` with
 * `node:http2` alone: one session, `JSON.stringify` out and `JSON.parse` back, nothing else. That is
 * the least any Node.js client does per request, so its CPU per create is the runtime's floor.
 */
import { connect } from 'node:http2';
import type { RequestOptions } from 'node:https';
import { text } from 'node:stream/consumers';
import { parseArgs } from 'node:util';
import { createKubeApi, resources } from '@kube-provisioner/controller';
import { KubeConfig, type V1PersistentVolume } from '@kubernetes/client-node';
import { forEachConcurrently } from './concurrency.ts';
import { numberedNames } from './fixtures.ts';

/** Sends one create and resolves when it is answered; `close` ends the connection. */
interface Creator {
  readonly warmUp: () => Promise<void>;
  readonly create: (volume: V1PersistentVolume) => Promise<void>;
  readonly close: () => Promise<void>;
}

function ourClientStack(kubeConfig: KubeConfig): Creator {
  const api = createKubeApi(kubeConfig, { rateLimit: { qps: Number.POSITIVE_INFINITY, burst: 1 } });
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

async function nodeHttp2(kubeConfig: KubeConfig): Promise<Creator> {
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

const { values } = parseArgs({
  options: {
    client: { type: 'string' },
    kubeconfig: { type: 'string' },
    prefix: { type: 'string' },
    count: { type: 'string' },
    concurrency: { type: 'string', default: '4' },
  },
});
const count = Number(values.count);
const concurrency = Number(values.concurrency);
if (values.client !== 'ours' && values.client !== 'node-http2') {
  throw new Error('--client must be ours or node-http2');
}
if (!values.kubeconfig || !values.prefix || !(count >= 1) || !(concurrency >= 1)) {
  throw new Error('--kubeconfig, --prefix, --count >= 1 and --concurrency >= 1 are required');
}
const template = JSON.parse(await text(process.stdin)) as V1PersistentVolume;
const kubeConfig = new KubeConfig();
kubeConfig.loadFromFile(values.kubeconfig);
const creator = values.client === 'ours' ? ourClientStack(kubeConfig) : await nodeHttp2(kubeConfig);
await creator.warmUp();
const cpu = process.cpuUsage();
const started = performance.now();
await forEachConcurrently(numberedNames(values.prefix, count), concurrency, (name) =>
  creator.create({ ...template, metadata: { ...template.metadata, name } }),
);
const seconds = (performance.now() - started) / 1000;
const used = process.cpuUsage(cpu);
await creator.close();
process.stdout.write(`${JSON.stringify({ seconds, cpu_seconds: (used.user + used.system) / 1e6 })}\n`);
