#!/usr/bin/env node
/**
 * What publishing per-node capacity costs the API server: `--nodes` hostpath instances (in this one
 * process, each with its own `CapacityPublisher`, as each node's instance runs it) publish for
 * `--classes` StorageClasses against a real control plane. Four steps, each timed with the API
 * server's request counts and the control plane's CPU: the first publication (every object created),
 * a tick on quiet disks (nothing changed), a tick on busy disks (every root's free space changed, by
 * 1 to 200 MiB),
 * and the withdrawal at shutdown. A tick is what each instance does every `--capacity-interval`
 * (60 s by default), so a tick's figures are per node per minute. Reported, never asserted.
 *
 *   npm exec -- node --conditions=@kube-provisioner/source packages/bench/src/capacity-publishing.ts \
 *     [--nodes 1000] [--classes 3] [--concurrency 50] [--out <file.json>]
 */
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { resources } from '@kube-provisioner/controller/client';
import { silentLogger } from '@kube-provisioner/controller/logging';
import { CapacityPublisher, csiStorageCapacities, type RootCapacity } from '@kube-provisioner/hostpath';
import { CoreV1Api, StorageV1Api } from '@kubernetes/client-node';
import { requestsBetween } from './api-requests.ts';
import { openBenchCluster } from './bench-cluster.ts';
import { positiveInteger } from './bench-options.ts';
import { forEachConcurrently } from './concurrency.ts';

const { values } = parseArgs({
  options: {
    nodes: { type: 'string', default: '1000' },
    classes: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '50' },
    out: { type: 'string' },
  },
});
const nodes = positiveInteger('nodes', values.nodes);
const classCount = positiveInteger('classes', values.classes);
const concurrency = positiveInteger('concurrency', values.concurrency);
const log = (message: string): void => {
  process.stderr.write(`${message}\n`);
};

/** One step's cost, over all nodes. */
interface StepResult {
  readonly step: 'first publication' | 'tick, quiet disks' | 'tick, busy disks' | 'withdrawal';
  readonly wallS: number;
  /** kube-apiserver's requests during the step, by `"<VERB> <resource>"`. */
  readonly requests: Readonly<Record<string, number>>;
  /** Requests that write (create, update, patch, delete), per node. */
  readonly writesPerNode: number;
  readonly requestsPerNode: number;
  /** CPU seconds of etcd, kube-apiserver, kube-controller-manager and kube-scheduler together. */
  readonly controlPlaneCpuS: number | undefined;
}

const gib = 1024 ** 3;
const runId = randomBytes(3).toString('hex');
const provisionerName = `capacity-${runId}.bench.kube-provisioner.io`;
const cluster = await openBenchCluster(log);
const namespace = `capacity-bench-${runId}`;
const classNames = Array.from({ length: classCount }, (_, index) => `capacity-bench-${runId}-${index}`);
const core = cluster.kubeConfig.makeApiClient(CoreV1Api);
const storage = cluster.kubeConfig.makeApiClient(StorageV1Api);
// The client's timers (a retry's back-off after a 429) do not hold the process open; this run does,
// as ProvisionController.run does for a provisioner.
const holdOpen = setInterval(() => {}, 2 ** 30);
try {
  await core.createNamespace({ body: { metadata: { name: namespace } } });
  for (const name of classNames) {
    await storage.createStorageClass({
      body: { metadata: { name }, provisioner: provisionerName, volumeBindingMode: 'WaitForFirstConsumer' },
    });
  }
  // Each node's root: 100 GiB, about half of it free (spread over 1 GiB, the step its room is published in).
  const free = Array.from({ length: nodes }, (_, index) => 50 * gib + ((index * 389) % 1024) * 1024 ** 2);
  const publishers = free.map(
    (_, index) =>
      new CapacityPublisher({
        capacities: cluster.api.resource(csiStorageCapacities),
        classes: cluster.api.resource(resources.storageClasses),
        capacity: {
          read: async (): Promise<RootCapacity> => ({
            capacityBytes: 100 * gib,
            freeBytes: free[index] ?? 0,
            reservedBytes: 0,
            volumes: 0,
          }),
        },
        provisionerName,
        nodeName: `node-${index}`,
        topology: { key: 'kubernetes.io/hostname', value: async () => `node-${index}` },
        namespace,
        logger: silentLogger,
      }),
  );
  const signal = new AbortController().signal;
  const steps: StepResult[] = [];
  const step = async (name: StepResult['step'], work: (publisher: CapacityPublisher) => Promise<unknown>) => {
    const [countsBefore, cpuBefore] = await Promise.all([
      cluster.apiRequestCounts(),
      cluster.controlPlaneCpuS(),
    ]);
    const started = performance.now();
    await forEachConcurrently(publishers, concurrency, async (publisher) => {
      await work(publisher);
    });
    const wallS = (performance.now() - started) / 1000;
    const [countsAfter, cpuAfter] = await Promise.all([
      cluster.apiRequestCounts(),
      cluster.controlPlaneCpuS(),
    ]);
    // The bench's own two metric scrapes are not the publishers'.
    const served = [...requestsBetween(countsBefore, countsAfter)].filter(
      ([key]) => !key.startsWith('GET metrics'),
    );
    const requests = Object.fromEntries(served);
    const total = served.reduce((sum, [, count]) => sum + count, 0);
    const writes = served
      .filter(([key]) => /^(POST|PUT|PATCH|DELETE) /u.test(key))
      .reduce((sum, [, count]) => sum + count, 0);
    const result: StepResult = {
      step: name,
      wallS,
      requests,
      writesPerNode: writes / nodes,
      requestsPerNode: total / nodes,
      controlPlaneCpuS: cpuBefore === undefined || cpuAfter === undefined ? undefined : cpuAfter - cpuBefore,
    };
    steps.push(result);
    log(
      `${name}: ${wallS.toFixed(1)} s, ${result.requestsPerNode.toFixed(2)} requests and ` +
        `${result.writesPerNode.toFixed(2)} writes per node, control plane CPU ${result.controlPlaneCpuS?.toFixed(1) ?? '?'} s`,
    );
  };
  await step('first publication', (publisher) => publisher.publish({ signal }));
  await step('tick, quiet disks', (publisher) => publisher.publish({ signal }));
  // Between 1 and 200 MiB written per node since the last tick.
  for (let index = 0; index < free.length; index++)
    free[index] = (free[index] ?? 0) - ((index % 200) + 1) * 1024 ** 2;
  await step('tick, busy disks', (publisher) => publisher.publish({ signal }));
  await step('withdrawal', (publisher) => publisher.withdraw({ signal }));
  const report = {
    scenario: 'capacity-publishing',
    kubernetesVersion: cluster.kubernetesVersion,
    nodes,
    classes: classCount,
    concurrency,
    steps,
  };
  if (values.out) await writeFile(values.out, `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
} finally {
  for (const name of classNames) await storage.deleteStorageClass({ name }).catch(() => undefined);
  await core.deleteNamespace({ name: namespace }).catch(() => undefined);
  await cluster.close();
  clearInterval(holdOpen);
}
