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
import { UsageMonitor, warnOnClaim } from '@kube-provisioner/controller/usage';
import { checkWritableDirectory, volumeUsageScanner } from '@kube-provisioner/safe-fs';
import { Registry } from 'prom-client';
import { ArchiveMetrics } from './archive-metrics.ts';
import type { NfsDialect } from './class-parameters.ts';
import { type NfsCliOptions, parseCliOptions, usage } from './cli-options.ts';
import { NfsProvisioner } from './nfs-provisioner.ts';
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

/** Runs `cli` with the process's arguments and environment, and sets the process exit code. */
export function runNfsProvisionerCli(cli: NfsCli): Promise<void> {
  return runProvisioner<NfsCliOptions>({
    name: cli.program,
    version: cli.version,
    usage: usage(cli.program),
    parse: parseCliOptions,
    // An unmounted or vanished export can neither create nor delete anything: refuse to start…
    preflight: (options) => checkMountRoot(options.mountRoot),
    setup: (options, api, logger) => {
      const registry = new Registry();
      // Best effort, like every Event: its timers do not hold the process at exit.
      const events = createEventRecorder({
        events: api.resource(resources.events),
        component: options.provisionerName,
        logger,
      });
      return {
        controller: {
          provisionerName: options.provisionerName,
          provisioner: new NfsProvisioner({
            dialect: cli.dialect,
            server: options.server,
            exportPath: options.exportPath,
            mountRoot: options.mountRoot,
            provisionerName: options.provisionerName,
            classes: api.resource(resources.storageClasses),
            deleteUnrecordedNested: options.deleteUnrecordedNested,
            archiveRetentionMs: options.archiveRetentionMs,
            archiveMetrics: new ArchiveMetrics(registry),
            owners: {
              claims: api.resource(resources.persistentVolumeClaims),
              volumes: api.resource(resources.persistentVolumes),
            },
            clones: {
              claims: api.resource(resources.persistentVolumeClaims),
              volumes: api.resource(resources.persistentVolumes),
              registry,
            },
            events,
            usage:
              options.usageScanRate === 0
                ? undefined
                : {
                    monitor: new UsageMonitor<NfsVolume>({
                      registry,
                      measure: volumeUsageScanner(options.mountRoot),
                      operationsPerSecond: options.usageScanRate,
                      scanTimeoutMs: options.usageIntervalMs,
                      onExceeded: warnOnClaim(events),
                    }),
                    volumes: api.resource(resources.persistentVolumes),
                  },
          }),
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
        // this user: a non-root image on a root-owned export, or root_squash).
        readinessChecks: {
          'mount-root': async () => {
            await checkMountRoot(options.mountRoot);
            await checkWritableDirectory(options.mountRoot);
          },
        },
        logFields: {
          dialect: cli.dialect,
          server: options.server,
          path: options.exportPath,
          mountRoot: options.mountRoot,
        },
      };
    },
  });
}
