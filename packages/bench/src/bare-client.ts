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
import { text } from 'node:stream/consumers';
import { parseArgs } from 'node:util';
import { KubeConfig, type V1PersistentVolume } from '@kubernetes/client-node';
import { forEachConcurrently } from './concurrency.ts';
import { numberedNames } from './fixtures.ts';
import { nodeHttp2, ourClientStack } from './pv-creators.ts';

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
