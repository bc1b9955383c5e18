/**
 * The program behind both CLIs: runs an {@link NfsProvisioner} of one dialect under a
 * ProvisionController until SIGTERM/SIGINT. Exit codes (decided by `runProvisioner`): 0 after a
 * graceful stop, 1 on an unexpected error (a lost Lease stops the work and campaigns again), 2 for
 * invalid configuration, a mount root that is not a directory included.
 */
import { stat } from 'node:fs/promises';
import { runProvisioner } from '@kube-provisioner/controller/cli';
import { resources } from '@kube-provisioner/controller/client';
import { createEventRecorder } from '@kube-provisioner/controller/events';
import { directorySnapshots } from '@kube-provisioner/controller/snapshot';
import { type MeasureVolume, UsageMonitor, warnOnClaim } from '@kube-provisioner/controller/usage';
import { checkWritableDirectory, volumeUsageScanner } from '@kube-provisioner/safe-fs';
import { Registry } from 'prom-client';
import { ArchiveMetrics } from './archive-metrics.ts';
import type { NfsDialect } from './class-parameters.ts';
import { type NfsCliOptions, parseCliOptions, usage } from './cli-options.ts';
import { ownPod } from './export-health-events.ts';
import { ExportMetrics } from './export-metrics.ts';
import { NfsProvisioner, type NfsProvisionerOptions } from './nfs-provisioner.ts';
import { SeveralExportsProvisioner } from './several-exports-provisioner.ts';
import { type ExportVolume, exportVolumeScanner } from './several-exports-usage.ts';
import type { NfsVolume } from './volume-usage.ts';

/** Which program to run. */
export interface NfsCli {
  /** Name in messages and help, e.g. `nfs-subdir-provisioner`. */
  readonly program: string;
  readonly dialect: NfsDialect;
  /** Printed by `--version` and logged at start. */
  readonly version: string;
}

async function checkMountRoot(mountRoot: string): Promise<void> {
  const stats = await stat(mountRoot).catch(() => undefined);
  if (stats?.isDirectory() !== true) throw new Error(`mount root ${mountRoot} is not a directory`);
}

/** Every mount root of `options`, by the name its readiness check carries. */
function mountRoots(options: NfsCliOptions): ReadonlyMap<string, string> {
  if (options.exports === undefined) return new Map([['mount-root', options.mountRoot]]);
  return new Map(options.exports.map((e) => [`export-${e.name}`, e.mountRoot]));
}

/** Runs `cli` with the process's arguments and environment, and sets the process exit code. */
export function runNfsProvisionerCli(cli: NfsCli): Promise<void> {
  return runProvisioner<NfsCliOptions>({
    name: cli.program,
    version: cli.version,
    usage: usage(cli.program),
    parse: parseCliOptions,
    // An unmounted or vanished export can neither create nor delete anything: refuse to start…
    preflight: async (options) => {
      for (const mountRoot of mountRoots(options).values()) await checkMountRoot(mountRoot);
    },
    setup: (options, api, logger) => {
      const registry = new Registry();
      // Best effort, like every Event: its timers do not hold the process at exit.
      const events = createEventRecorder({
        events: api.resource(resources.events),
        component: options.provisionerName,
        logger,
      });
      const volumes = api.resource(resources.persistentVolumes);
      const claims = api.resource(resources.persistentVolumeClaims);
      const shared = {
        dialect: cli.dialect,
        provisionerName: options.provisionerName,
        classes: api.resource(resources.storageClasses),
        deleteUnrecordedNested: options.deleteUnrecordedNested,
        archiveRetentionMs: options.archiveRetentionMs,
        archiveMetrics: new ArchiveMetrics(registry),
        owners: { claims, volumes },
        clones: { claims, volumes, registry },
        snapshots: {
          snapshots: api.resource(directorySnapshots),
          claims,
          volumes,
          classes: api.resource(resources.storageClasses),
          events,
          registry,
        },
        events,
      } satisfies Partial<NfsProvisionerOptions>;
      const monitor = <V extends NfsVolume>(measure: MeasureVolume<V>): UsageMonitor<V> =>
        new UsageMonitor<V>({
          registry,
          measure,
          operationsPerSecond: options.usageScanRate,
          scanTimeoutMs: options.usageIntervalMs,
          onExceeded: warnOnClaim(events),
        });
      const measured = options.usageScanRate !== 0;
      const provisioner =
        options.exports === undefined
          ? new NfsProvisioner({
              ...shared,
              server: options.server,
              exportPath: options.exportPath,
              mountRoot: options.mountRoot,
              usage: measured
                ? { monitor: monitor(volumeUsageScanner(options.mountRoot)), volumes }
                : undefined,
            })
          : new SeveralExportsProvisioner({
              ...shared,
              exports: options.exports,
              pod: ownPod(process.env),
              metrics: new ExportMetrics(
                registry,
                options.exports.map((e) => e.name),
              ),
              usage: measured
                ? { monitor: monitor<ExportVolume>(exportVolumeScanner(options.exports)), volumes }
                : undefined,
            });
      return {
        controller: {
          provisionerName: options.provisionerName,
          provisioner,
          metricsRegistry: registry,
          // Archive retention and usage share the maintenance runs.
          maintenanceIntervalMs: options.usageIntervalMs,
          leaderElection: options.leaderElection && {
            leaseDurationMs: options.leaseDurationMs,
            renewDeadlineMs: options.renewDeadlineMs,
            retryPeriodMs: options.retryPeriodMs,
            releaseOnShutdown: true,
          },
        },
        healthPort: options.metricsPort,
        // …and stop being ready when it goes away later, or cannot take new volumes (not writable by
        // this user: a non-root image on a root-owned export, or root_squash). One check per export,
        // so the readiness endpoint names the exports that are down.
        readinessChecks: Object.fromEntries(
          [...mountRoots(options)].map(([name, mountRoot]) => [
            name,
            async () => {
              await checkMountRoot(mountRoot);
              await checkWritableDirectory(mountRoot);
            },
          ]),
        ),
        logFields:
          options.exports === undefined
            ? {
                dialect: cli.dialect,
                server: options.server,
                path: options.exportPath,
                mountRoot: options.mountRoot,
              }
            : { dialect: cli.dialect, exports: options.exports },
      };
    },
  });
}
