/**
 * The `kube-hostpath-provisioner` program, loaded by `cli.ts` once the Node.js version is checked: runs a {@link HostPathProvisioner} under a ProvisionController until
 * SIGTERM/SIGINT. Exit codes (decided by `runProvisioner`): 0 after a graceful stop, 1 on a fatal
 * error (a lost Lease stops the work and campaigns again), 2 for invalid configuration.
 */
import { stat } from 'node:fs/promises';
import type { KubeApi } from '@kube-provisioner/controller';
import { runProvisioner } from '@kube-provisioner/controller/cli';
import { resources } from '@kube-provisioner/controller/client';
import { createEventRecorder, type EventRecorder } from '@kube-provisioner/controller/events';
import { UsageMonitor, warnOnClaim } from '@kube-provisioner/controller/usage';
import { checkWritableDirectory, fsOpsForRoot } from '@kube-provisioner/safe-fs';
import { Registry } from 'prom-client';
import { type CliOptions, parseCliOptions, program, usage } from './cli-options.ts';
import { directorySnapshots } from './directory-snapshot.ts';
import { HostPathProvisioner } from './hostpath-provisioner.ts';
import { quotaMeasure } from './quota-usage.ts';
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

await runProvisioner<CliOptions>({
  name: program,
  version,
  usage: usage(),
  parse: parseCliOptions,
  setup(options, api) {
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
