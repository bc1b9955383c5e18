/**
 * The program behind both CLIs: runs an {@link NfsProvisioner} of one dialect under a
 * ProvisionController until SIGTERM/SIGINT. Exit codes: 0 after a graceful stop, 1 when the Lease is
 * lost (so the pod restarts, as upstream) or on an unexpected error, 2 for invalid configuration.
 */
import { stat } from 'node:fs/promises';
import {
  createKubeApi,
  createLogger,
  HealthServer,
  isLeaderElectionLostError,
  levelForVerbosity,
  ProvisionController,
  resources,
} from '@kube-provisioner/controller';
import { KubeConfig } from '@kubernetes/client-node';
import type { NfsDialect } from './class-parameters.ts';
import { type NfsCliOptions, parseCliOptions, UsageError, usage } from './cli-options.ts';
import { NfsProvisioner } from './nfs-provisioner.ts';

/** Which program to run. */
export interface NfsCli {
  /** Name in messages and help, e.g. `nfs-subdir-provisioner`. */
  readonly program: string;
  readonly dialect: NfsDialect;
}

/** Exit code of a start refused for its configuration. */
const usageExitCode = 2;

async function checkMountRoot(mountRoot: string): Promise<void> {
  const stats = await stat(mountRoot).catch(() => undefined);
  if (stats?.isDirectory() !== true) throw new Error(`mount root ${mountRoot} is not a directory`);
}

async function run(cli: NfsCli, options: NfsCliOptions): Promise<number> {
  const logger = createLogger({ level: levelForVerbosity(options.verbosity) });
  const kubeConfig = new KubeConfig();
  if (options.kubeconfig === undefined) kubeConfig.loadFromCluster();
  else kubeConfig.loadFromFile(options.kubeconfig);
  const api = createKubeApi(kubeConfig);
  const controller = new ProvisionController({
    api,
    provisionerName: options.provisionerName,
    provisioner: new NfsProvisioner({
      dialect: cli.dialect,
      server: options.server,
      exportPath: options.exportPath,
      mountRoot: options.mountRoot,
      provisionerName: options.provisionerName,
      classes: api.resource(resources.storageClasses),
    }),
    leaderElection: options.leaderElection,
    ...(options.leaderElectionNamespace === undefined
      ? {}
      : { leaderElectionNamespace: options.leaderElectionNamespace }),
    leaseDurationMs: options.leaseDurationMs,
    renewDeadlineMs: options.renewDeadlineMs,
    retryPeriodMs: options.retryPeriodMs,
    releaseLeaseOnShutdown: true,
    logger,
  });
  const health =
    options.metricsPort === 0
      ? undefined
      : new HealthServer({
          port: options.metricsPort,
          registries: [controller.registry],
          processMetrics: true,
        });
  // An unmounted or vanished export can neither create nor delete anything.
  health?.addReadinessCheck('mount-root', () => checkMountRoot(options.mountRoot));
  await health?.listen();

  const stop = new AbortController();
  const onSignal = (signal: NodeJS.Signals): void => {
    logger.info({ signal }, 'stopping');
    stop.abort();
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  logger.info(
    { dialect: cli.dialect, server: options.server, path: options.exportPath, mountRoot: options.mountRoot },
    `starting ${cli.program}`,
  );
  try {
    await controller.run(stop.signal);
    return 0;
  } catch (err) {
    if (!isLeaderElectionLostError(err)) throw err;
    logger.error({ err }, 'leader election lost; exiting');
    return 1;
  } finally {
    await health?.close();
    await api.close();
  }
}

async function main(cli: NfsCli, argv: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  let options: NfsCliOptions;
  try {
    options = parseCliOptions(argv, env);
    if (!options.help) await checkMountRoot(options.mountRoot);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`${cli.program}: ${err.message}\n\n${usage(cli.program)}\n`);
    } else {
      process.stderr.write(`${cli.program}: ${(err as Error).message}\n`);
    }
    return usageExitCode;
  }
  if (options.help) {
    process.stdout.write(`${usage(cli.program)}\n`);
    return 0;
  }
  return run(cli, options);
}

/**
 * Runs `cli` with the process's arguments and environment and resolves to its exit code; never
 * rejects (an unexpected error is printed and yields 1).
 */
export async function runNfsProvisionerCli(cli: NfsCli): Promise<number> {
  try {
    return await main(cli, process.argv.slice(2), process.env);
  } catch (err) {
    process.stderr.write(
      `${cli.program}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    return 1;
  }
}
