#!/usr/bin/env node
/**
 * `kube-hostpath-provisioner`: runs a {@link HostPathProvisioner} under a ProvisionController until
 * SIGTERM/SIGINT. Exit codes: 0 after a graceful stop, 1 when the leader Lease is lost (so the kubelet
 * restarts the pod, as the Go library does) or on a fatal error, 2 for invalid configuration.
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
import { type CliOptions, parseCliOptions, UsageError, usage } from './cli-options.ts';
import { HostPathProvisioner } from './hostpath-provisioner.ts';

async function run(options: CliOptions): Promise<number> {
  const logger = createLogger({ level: levelForVerbosity(options.verbosity) });
  const kubeConfig = new KubeConfig();
  if (options.kubeconfig === undefined) kubeConfig.loadFromCluster();
  else kubeConfig.loadFromFile(options.kubeconfig);
  const api = createKubeApi(kubeConfig);
  const perNode = options.mode === 'per-node';
  const provisioner = new HostPathProvisioner({
    mode: options.mode,
    provisionerName: options.provisionerName,
    root: options.root,
    nodeName: options.nodeName,
    nodeAffinityKey: options.nodeAffinityKey,
    nodes: perNode ? api.resource(resources.nodes) : undefined,
  });
  const controller = new ProvisionController({
    api,
    provisionerName: options.provisionerName,
    provisioner,
    // Per-node instances are each authoritative for their own node; only a shared root needs a leader.
    leaderElection: !perNode,
    ...(options.leaderElectionNamespace === undefined
      ? {}
      : { leaderElectionNamespace: options.leaderElectionNamespace }),
    logger,
  });
  const health =
    options.healthPort === 0
      ? undefined
      : new HealthServer({
          port: options.healthPort,
          registries: [controller.registry],
          processMetrics: true,
        });
  // Without its root (a missing or unmounted hostPath) the instance can neither create nor delete.
  health?.addReadinessCheck('root', () => checkRoot(options.root));
  await health?.listen();

  const stop = new AbortController();
  const onSignal = (signal: NodeJS.Signals): void => {
    logger.info({ signal }, 'stopping');
    stop.abort();
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  logger.info(
    { mode: options.mode, root: options.root, node: options.nodeName },
    'starting hostpath provisioner',
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

async function checkRoot(root: string): Promise<void> {
  if (!(await stat(root)).isDirectory()) throw new Error(`${root} is not a directory`);
}

async function main(): Promise<number> {
  let options: CliOptions;
  try {
    options = parseCliOptions(process.argv.slice(2), process.env);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`kube-hostpath-provisioner: ${err.message}\n\n${usage()}\n`);
    return 2;
  }
  if (options.help) {
    process.stdout.write(`${usage()}\n`);
    return 0;
  }
  return run(options);
}

try {
  process.exitCode = await main();
} catch (err) {
  process.stderr.write(
    `kube-hostpath-provisioner: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exitCode = 1;
}
