/**
 * The `kube-hostpath-provisioner` program, loaded by `cli.ts` once the Node.js version is checked: runs a {@link HostPathProvisioner} under a ProvisionController until
 * SIGTERM/SIGINT. Exit codes (decided by `runProvisioner`): 0 after a graceful stop, 1 on a fatal
 * error (a lost Lease stops the work and campaigns again), 2 for invalid configuration.
 */
import { stat } from 'node:fs/promises';
import { resources } from '@kube-provisioner/controller';
import { runProvisioner } from '@kube-provisioner/controller/cli';
import { checkWritableDirectory, fsOpsForRoot } from '@kube-provisioner/safe-fs';
import { type CliOptions, parseCliOptions, program, usage } from './cli-options.ts';
import { HostPathProvisioner } from './hostpath-provisioner.ts';
import { version } from './version.ts';

async function checkRoot(root: string): Promise<void> {
  if (!(await stat(root)).isDirectory()) throw new Error(`${root} is not a directory`);
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
        }),
        // Per-node instances are each authoritative for their own node; only a shared root needs a leader.
        leaderElection: !perNode,
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
