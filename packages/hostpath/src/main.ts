/**
 * The `kube-hostpath-provisioner` program, loaded by `cli.ts` once the Node.js version is checked: runs a {@link HostPathProvisioner} under a ProvisionController until
 * SIGTERM/SIGINT. Exit codes (decided by `runProvisioner`): 0 after a graceful stop, 1 on a fatal
 * error (a lost Lease stops the work and campaigns again), 2 for invalid configuration.
 */
import { stat } from 'node:fs/promises';
import type { KubeApi, Logger, OperationContext } from '@kube-provisioner/controller';
import { runProvisioner, UsageError } from '@kube-provisioner/controller/cli';
import { createKubeApi, resources } from '@kube-provisioner/controller/client';
import { createEventRecorder, type EventRecorder } from '@kube-provisioner/controller/events';
import { directorySnapshots } from '@kube-provisioner/controller/snapshot';
import {
  type MeasuredVolume,
  type MeasureVolume,
  UsageMonitor,
  warnOnClaim,
} from '@kube-provisioner/controller/usage';
import { checkWritableDirectory, fsOpsForRoot, VolumeRoot } from '@kube-provisioner/safe-fs';
import { Registry } from 'prom-client';
import { CapacityPublisher, csiStorageCapacities } from './capacity-publisher.ts';
import { type CliOptions, parseCliOptions, program, usage } from './cli-options.ts';
import { coalescedVolumeList } from './coalesced-volume-list.ts';
import { HostPathProvisioner } from './hostpath-provisioner.ts';
import { NodeRootsReload } from './node-roots-reload.ts';
import { quotaMeasure } from './quota-usage.ts';
import { RootCapacityReader } from './root-capacity.ts';
import { gaugedCapacityReader } from './root-capacity-gauges.ts';
import type { NamedRoot } from './root-placement.ts';
import { type RootOfSet, RootSetProvisioner, type RootSetVolume } from './root-set-provisioner.ts';
import { version } from './version.ts';

async function checkRoot(root: string): Promise<void> {
  if (!(await stat(root)).isDirectory()) throw new Error(`${root} is not a directory`);
}

/**
 * Refuses named roots on one file system: their free space would be counted twice, and their
 * enforced volumes would take project IDs of one mount without seeing each other's records. A root
 * not there yet is left to the readiness check.
 */
async function checkSeparateFileSystems(roots: readonly NamedRoot[]): Promise<void> {
  const byDevice = new Map<number, NamedRoot>();
  for (const root of roots) {
    const device = await stat(root.path).then(
      (stats) => stats.dev,
      () => undefined,
    );
    if (device === undefined) continue;
    const other = byDevice.get(device);
    if (other !== undefined) {
      throw new UsageError(
        `roots ${other.name} (${other.path}) and ${root.name} (${root.path}) are on one file system: each named root must be a file system of its own`,
      );
    }
    byDevice.set(device, root);
  }
}

/**
 * The usage monitor of `options`, reading PVs through `api` and writing events to `recorder`; off at rate 0. Its
 * walks stay on the thread pool whatever the root: at their paced rate the pool's cost is nothing,
 * and listing a directory of a million entries must not stop the event loop (and lease renewal).
 */
function usageReporting<V extends MeasuredVolume>(
  options: CliOptions,
  api: KubeApi,
  registry: Registry,
  recorder: EventRecorder,
  measure: MeasureVolume<V>,
) {
  if (options.usageScanRate === 0) return undefined;
  const monitor = new UsageMonitor<V>({
    registry,
    operationsPerSecond: options.usageScanRate,
    scanTimeoutMs: options.usageIntervalMs,
    onExceeded: warnOnClaim(recorder),
    measure,
  });
  return { monitor, volumes: api.resource(resources.persistentVolumes) };
}

/** Measures each volume of a node's named roots with its own root's measure (quota or walk). */
function measureOnItsRoot(): MeasureVolume<RootSetVolume> {
  // Made on first use: a reloaded node roots file may add roots.
  const measures = new Map<string, MeasureVolume<RootSetVolume>>();
  return (volume, scan) => {
    let measure = measures.get(volume.root);
    if (measure === undefined) {
      measure = quotaMeasure({ root: volume.root });
      measures.set(volume.root, measure);
    }
    return measure(volume, scan);
  };
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
  // Several roots read at once (a publication, an enforced placement) share one PV list.
  const volumes = coalescedVolumeList(api.resource(resources.persistentVolumes));
  const readerOf = (root: string, fs: ReturnType<typeof fsOpsForRoot>) => {
    const scope = { mode: options.mode, provisionerName: options.provisionerName, root, nodeName };
    const reader = new RootCapacityReader(new VolumeRoot(root, { fs: fs.ops }), volumes, scope);
    return gaugedCapacityReader(reader, registry, root);
  };
  const reader = readerOf(options.root, rootFs);
  // One reader per path for the life of the process, so a root listed again keeps its gauges.
  const readers = new Map([[options.root, { fs: rootFs.ops, capacity: reader }]]);
  const rootOfSet = (root: NamedRoot): RootOfSet => {
    let known = readers.get(root.path);
    if (known === undefined) {
      const fs = fsOpsForRoot(root.path);
      known = { fs: fs.ops, capacity: readerOf(root.path, fs) };
      readers.set(root.path, known);
    }
    return { ...root, ...known };
  };
  const roots = (options.namedRoots ?? []).map(rootOfSet);
  // The roots new volumes go to, published; a reloaded node roots file replaces them.
  let placeable: readonly RootOfSet[] = roots;
  const setPlaceable = (next: readonly RootOfSet[]) => {
    placeable = next;
  };
  const { namespace, name, uid } = options.pod;
  if (!options.publishCapacity || namespace === undefined) {
    return { reader, roots, rootOfSet, setPlaceable, changed: () => {} };
  }
  const nodes = api.resource(resources.nodes);
  const publisher = new CapacityPublisher({
    capacities: api.resource(csiStorageCapacities),
    classes: api.resource(resources.storageClasses),
    capacity:
      options.namedRoots === undefined
        ? reader
        : {
            get roots() {
              return placeable.map((root) => ({
                name: root.name,
                labels: root.labels,
                read: (context: Pick<OperationContext, 'signal'>) => root.capacity.read(context),
              }));
            },
          },
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
  return { reader, roots, rootOfSet, setPlaceable, changed: publish };
}

await runProvisioner<CliOptions>({
  name: program,
  version,
  usage: usage(),
  parse: parseCliOptions,
  preflight: (options) =>
    checkSeparateFileSystems([...(options.namedRoots ?? []), ...(options.retiredRoots ?? [])]),
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
    const common = {
      provisionerName: options.provisionerName,
      nodeAffinityKey: options.nodeAffinityKey,
      nodes: perNode ? api.resource(resources.nodes) : undefined,
      fs: rootFs.ops,
      events: recorder,
      clones: { claims, volumes, registry },
      onVolumesChanged: capacity?.changed,
    };
    const provisioner =
      capacity === undefined || options.namedRoots === undefined
        ? new HostPathProvisioner({
            ...common,
            mode: options.mode,
            root: options.root,
            nodeName: options.nodeName,
            // Enforced volumes are read from quota accounting; the others are walked.
            usage: usageReporting(options, api, registry, recorder, quotaMeasure({ root: options.root })),
            // Snapshots live on the one shared root; per node they are a follow-up.
            snapshots: perNode
              ? undefined
              : {
                  snapshots: api.resource(directorySnapshots),
                  claims,
                  volumes,
                  classes: api.resource(resources.storageClasses),
                  events: recorder,
                  registry,
                },
            capacity: capacity?.reader,
          })
        : new RootSetProvisioner({
            ...common,
            nodeName: options.nodeName ?? '',
            roots: capacity.roots,
            retiredRoots: options.retiredRoots?.map(capacity.rootOfSet),
            usage: usageReporting(options, api, registry, recorder, measureOnItsRoot()),
          });
    if (
      options.rootsConfig !== undefined &&
      provisioner instanceof RootSetProvisioner &&
      capacity !== undefined
    ) {
      const { name, namespace } = options.pod;
      const reload = new NodeRootsReload({
        path: options.rootsConfig.path,
        nodeName: options.nodeName ?? '',
        applied: options.rootsConfig.text,
        async apply(roots, retired) {
          await checkSeparateFileSystems([...roots, ...retired]);
          const change = provisioner.setRoots(roots.map(capacity.rootOfSet), retired.map(capacity.rootOfSet));
          capacity.setPlaceable(provisioner.placeableRoots);
          capacity.changed();
          return change;
        },
        logger,
        events:
          name === undefined || namespace === undefined
            ? undefined
            : { recorder, pod: { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace } } },
        registry,
      });
      reload.start(options.rootsConfigIntervalMs);
    }
    // The roots that must be there and writable: those new volumes go to.
    const rootPaths = () =>
      provisioner instanceof RootSetProvisioner
        ? provisioner.placeableRoots.map((root) => root.path)
        : [options.root];
    return {
      controller: {
        provisionerName: options.provisionerName,
        provisioner,
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
          for (const root of rootPaths()) {
            await checkRoot(root);
            await checkWritableDirectory(root);
          }
        },
      },
      logFields: {
        mode: options.mode,
        root: options.namedRoots?.map((root) => `${root.name}=${root.path}`).join(',') ?? options.root,
        node: options.nodeName,
        fileSystem: rootFs.fileSystem,
        fsCalls: rootFs.calls,
      },
    };
  },
});
