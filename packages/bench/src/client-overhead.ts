#!/usr/bin/env node
/**
 * Our client stack's own cost per request, without an API server's: PV creates against a loopback
 * HTTPS server offering HTTP/2 and HTTP/1.1, as kube-apiserver does (a child process, so its CPU is not counted) that answers each with the object, 4 in
 * flight like the provisioner's workers, measuring wall time and this process's CPU per request.
 * `node:http2` alone (the runtime's floor, `pv-creators.ts`) runs beside it, and with
 * `--compare <kube-api.ts>` (e.g. an older checkout's `packages/controller/src/client/kube-api.ts`)
 * so does that stack: all in the same process, rounds rotating, so their ratios are fair on a shared machine.
 *
 *   npm exec -- node --conditions=@kube-provisioner/source packages/bench/src/client-overhead.ts \
 *     [--requests 3000] [--rounds 3] [--compare /tmp/before/packages/controller/src/client/kube-api.ts]
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { createKubeApi } from '@kube-provisioner/controller';
import { createLoopbackServingPair } from '@kube-provisioner/testenv/internal';
import { KubeConfig, type V1PersistentVolume } from '@kubernetes/client-node';
import { median } from './compare-table.ts';
import { forEachConcurrently } from './concurrency.ts';
import { nodeHttp2, ourClientStack, type PvCreator } from './pv-creators.ts';

const serverSource = `
const http2 = require('node:http2');
const fs = require('node:fs');
const tls = { key: fs.readFileSync(process.argv[1]), cert: fs.readFileSync(process.argv[2]), allowHTTP1: true };
const server = http2.createSecureServer(tls, (req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks)) : {};
    body.metadata = { ...body.metadata, uid: '6b1f0c1e-8c1a-4a7e-9d43-3f7c1d0e5a21', resourceVersion: '12345',
      creationTimestamp: '2026-11-23T18:00:00Z', managedFields: [] };
    body.status = { phase: 'Pending' };
    res.writeHead(201, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(String(server.address().port) + '\\n'));
`;

const volume: V1PersistentVolume = {
  apiVersion: 'v1',
  kind: 'PersistentVolume',
  metadata: {
    name: 'x',
    annotations: { 'pv.kubernetes.io/provisioned-by': 'bench.kube-provisioner.io/hostpath' },
    labels: { 'bench.kube-provisioner.io/run': 'overhead' },
  },
  spec: {
    capacity: { storage: '1Mi' },
    accessModes: ['ReadWriteOnce'],
    persistentVolumeReclaimPolicy: 'Delete',
    storageClassName: 'bench',
    hostPath: { path: '/srv/x' },
    claimRef: { kind: 'PersistentVolumeClaim', namespace: 'bench', name: 'c', uid: 'u', apiVersion: 'v1' },
  },
};

async function round(
  creator: PvCreator,
  requests: number,
): Promise<{ perSecond: number; cpuUsPerRequest: number }> {
  await creator.create({ ...volume, metadata: { ...volume.metadata, name: 'warm-up' } });
  const names = Array.from({ length: requests }, (_, i) => `pv-${i}`);
  const cpu = process.cpuUsage();
  const started = performance.now();
  await forEachConcurrently(names, 4, (name) =>
    creator.create({ ...volume, metadata: { ...volume.metadata, name } }),
  );
  const elapsed = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  return { perSecond: requests / elapsed, cpuUsPerRequest: (used.user + used.system) / requests };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      requests: { type: 'string', default: '3000' },
      rounds: { type: 'string', default: '3' },
      compare: { type: 'string' },
    },
  });
  const requests = Number(values.requests);
  const rounds = Number(values.rounds);
  const dir = mkdtempSync(join(tmpdir(), 'client-overhead-'));
  const { key, cert } = await createLoopbackServingPair(dir);
  const server = spawn(process.execPath, ['-e', serverSource, key, cert], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [line] = (await once(server.stdout, 'data')) as [Buffer];
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [
      {
        name: 'c',
        server: `https://127.0.0.1:${line.toString().trim()}`,
        caData: readFileSync(cert).toString('base64'),
      },
    ],
    users: [{ name: 'u', token: 'bench-token' }],
    contexts: [{ name: 'c', cluster: 'c', user: 'u' }],
    currentContext: 'c',
  });
  const stacks: [string, () => Promise<PvCreator>][] = [
    ['current', async () => ourClientStack(kubeConfig)],
    ['node:http2 alone', () => nodeHttp2(kubeConfig)],
  ];
  if (values.compare !== undefined) {
    const other = (await import(values.compare)) as { createKubeApi: typeof createKubeApi };
    stacks.push(['compared', async () => ourClientStack(kubeConfig, other.createKubeApi)]);
  }
  const results = new Map<string, { perSecond: number; cpuUsPerRequest: number }[]>();
  try {
    for (let index = 0; index < rounds; index++) {
      const order = [...stacks.slice(index % stacks.length), ...stacks.slice(0, index % stacks.length)];
      for (const [name, start] of order) {
        const creator = await start();
        const result = await round(creator, requests);
        await creator.close();
        results.set(name, [...(results.get(name) ?? []), result]);
        process.stderr.write(
          `round ${index + 1} ${name}: ${result.perSecond.toFixed(0)} req/s, ${result.cpuUsPerRequest.toFixed(0)} µs CPU/request\n`,
        );
      }
    }
  } finally {
    server.kill();
    rmSync(dir, { recursive: true, force: true });
  }
  for (const [name, list] of results) {
    process.stdout.write(
      `${name}: median ${median(list.map((r) => r.perSecond)).toFixed(0)} req/s, ` +
        `${median(list.map((r) => r.cpuUsPerRequest)).toFixed(0)} µs CPU/request\n`,
    );
  }
}

await main();
