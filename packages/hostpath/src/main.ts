/**
 * The `kube-hostpath-provisioner` program, loaded by `cli.ts` once the Node.js version is checked: runs a {@link HostPathProvisioner} under a ProvisionController until
 * SIGTERM/SIGINT. Exit codes (decided by `runProvisioner`): 0 after a graceful stop, 1 on a fatal
 * error (a lost Lease stops the work and campaigns again), 2 for invalid configuration.
 */
import { stat } from 'node:fs/promises';
import type { KubeApi, Logger } from '@kube-provisioner/controller';
import { runProvisioner } from '@kube-provisioner/controller/cli';
import { createKubeApi, resources } from '@kube-provisioner/controller/client';
import { createEventRecorder, type EventRecorder } from '@kube-provisioner/controller/events';
import { UsageMonitor, warnOnClaim } from '@kube-provisioner/controller/usage';
import { checkWritableDirectory, fsOpsForRoot, VolumeRoot } from '@kube-provisioner/safe-fs';
import { Registry } from 'prom-client';
import { CapacityPublisher, csiStorageCapacities } from './capacity-publisher.ts';
import { type CliOptions, parseCliOptions, program, usage } from './cli-options.ts';
import { directorySnapshots } from './directory-snapshot.ts';
import { HostPathProvisioner } from './hostpath-provisioner.ts';
import { quotaMeasure } from './quota-usage.ts';
import { RootCapacityReader } from './root-capacity.ts';
import { gaugedCapacityReader } from './root-capacity-gauges.ts';
import { version } from './version.ts';

async function checkRoot(root: string): Promise<void> {
  if (!(await stat(root)).isDirectory()) throw new Error(`${root} is not a directory`);
}

/**
 * The usage monitor of `options`, reading PVs through `api` and writing events to `recorder`; off at rate 0. Its
 * walks stay on the thread pool whatever the root: at their paced rate the pool's cost is nothing,
 * and listing a directory of a million entries must not stop the event loop (and lease renewal).
 */
function usageReporting(options: CliOptions, api: KubeApi, registry: Registry, recorder: EventRecorder) {
  if (options.usageScanRate === 0) return undefined;
  const monitor = new UsageMonitor({
    registry,
    operationsPerSecond: options.usageScanRate,
    scanTimeoutMs: options.usageIntervalMs,
    onExceeded: warnOnClaim(recorder),
    // Enforced volumes are read from quota accounting; the others are walked.
    measure: quotaMeasure({ root: options.root }),
  });
  return { monitor, volumes: api.resource(resources.persistentVolumes) };
}

/**
 * Per node: the root's capacity (metrics, and the room check that reschedules a claim) and, when
 * publishing is on, its publisher. It runs beside the controller: on a schedule, after each volume
 * made or deleted, and withdraws its objects on SIGTERM/SIGINT (within 5 s; the Pod's deletion
 * garbage-collects whatever is left).
 */
function capacityOf(
  options: CliOptions,
  api: KubeApi,
  registry: Registry,
  rootFs: ReturnType<typeof fsOpsForRoot>,
  logger: Logger,
) {
  const nodeName = options.nodeName ?? '';
  const scope = {
    mode: options.mode,
    provisionerName: options.provisionerName,
    root: options.root,
    nodeName,
  };
  const volumes = api.resource(resources.persistentVolumes);
  const reader = gaugedCapacityReader(
    new RootCapacityReader(new VolumeRoot(options.root, { fs: rootFs.ops }), volumes, scope),
    registry,
    options.root,
  );
  const { namespace, name, uid } = options.pod;
  if (!options.publishCapacity || namespace === undefined) return { reader, changed: () => {} };
  const nodes = api.resource(resources.nodes);
  const publisher = new CapacityPublisher({
    capacities: api.resource(csiStorageCapacities),
    classes: api.resource(resources.storageClasses),
    capacity: reader,
    provisionerName: options.provisionerName,
    nodeName,
    topology: {
      key: options.nodeAffinityKey,
      value: async (signal) =>
        (await nodes.get(nodeName, { signal })).metadata?.labels?.[options.nodeAffinityKey] ?? nodeName,
    },
    namespace,
    owner: name === undefined || uid === undefined ? undefined : { apiVersion: 'v1', kind: 'Pod', name, uid },
    logger,
  });
  const running = new AbortController();
  const publish = () => void publisher.request(running.signal);
  const timer = options.capacityIntervalMs > 0 ? setInterval(publish, options.capacityIntervalMs) : undefined;
  timer?.unref();
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      clearInterval(timer);
      running.abort();
      // A client of its own: the controller's is closed as soon as the controller has stopped.
      const client = createKubeApi(
        options.kubeconfig === undefined ? 'in-cluster' : { kubeconfig: options.kubeconfig },
      );
      publisher
        .withdraw({ signal: AbortSignal.timeout(5000) }, client.resource(csiStorageCapacities))
        .then((objects) => logger.info({ objects }, 'published capacity withdrawn'))
        .catch((err: unknown) => logger.warn({ err }, 'withdrawing the published capacity failed'))
        .finally(() => client.close());
    });
  }
  publish();
  return { reader, changed: publish };
}

await runProvisioner<CliOptions>({
  name: program,
  version,
  usage: usage(),
  parse: parseCliOptions,
  setup(options, api, logger) {
    const perNode = options.mode === 'per-node';
    // On a local disk the file-system calls run on the event loop's thread (5x less CPU per volume);
    // a shared root may be a network file system, where they stay on the thread pool.
    const rootFs = fsOpsForRoot(options.root);
    const registry = new Registry();
    const claims = api.resource(resources.persistentVolumeClaims);
    const volumes = api.resource(resources.persistentVolumes);
    const recorder = createEventRecorder({
      events: api.resource(resources.events),
      component: options.provisionerName,
      host: options.nodeName ?? '',
    });
    const capacity = perNode ? capacityOf(options, api, registry, rootFs, logger) : undefined;
    return {
      controller: {
        provisionerName: options.provisionerName,
        provisioner: new HostPathProvisioner({
          mode: options.mode,
          provisionerName: options.provisionerName,
          root: options.root,
          nodeName: options.nodeName,
          nodeAffinityKey: options.nodeAffinityKey,
          nodes: perNode ? api.resource(resources.nodes) : undefined,
          fs: rootFs.ops,
          usage: usageReporting(options, api, registry, recorder),
          events: recorder,
          clones: { claims, volumes, registry },
          // Snapshots live on the one shared root; per node they are a follow-up.
          snapshots: perNode ? undefined : { snapshots: api.resource(directorySnapshots), claims, volumes },
          capacity: capacity?.reader,
          onVolumesChanged: capacity?.changed,
        }),
        metricsRegistry: registry,
        maintenanceIntervalMs: options.usageIntervalMs,
        // Per-node instances are each authoritative for their own node; only a shared root needs a leader.
        leaderElection: !perNode && {
          leaseDurationMs: options.leaseDurationMs,
          renewDeadlineMs: options.renewDeadlineMs,
          retryPeriodMs: options.retryPeriodMs,
        },
        addFinalizer: options.addFinalizer,
      },
      healthPort: options.healthPort,
      // Without its root (a missing or unmounted hostPath) the instance can neither create nor delete.
      // Not ready while the root cannot take new volumes (gone, or not writable by this user).
      readinessChecks: {
        root: async () => {
          await checkRoot(options.root);
          await checkWritableDirectory(options.root);
        },
      },
      logFields: {
        mode: options.mode,
        root: options.root,
        node: options.nodeName,
        fileSystem: rootFs.fileSystem,
        fsCalls: rootFs.calls,
      },
    };
  },
});
