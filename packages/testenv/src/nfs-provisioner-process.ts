/**
 * An NFS provisioner CLI under test, wired the way its container runs: `NFS_SERVER`/`NFS_PATH` name a
 * real NFS server (nfs-ganesha), and `--mount-root` is the exported directory on disk, which is what
 * the pod's NFS mount would show.
 */
import { readFile } from 'node:fs/promises';
import { join, posix } from 'node:path';
import type { V1PersistentVolume } from '@kubernetes/client-node';
import { writeNfsFile } from './libnfs.ts';
import { type NfsServer, startNfsServer } from './nfs-server.ts';
import { type ProgramCommand, type RunningProgram, startProgram } from './program-process.ts';

/** Options of {@link startNfsProvisioner}. */
export interface StartNfsProvisionerOptions {
  /** The CLI, e.g. from `workspaceBinCommand`; `--mount-root` is appended. */
  readonly command: ProgramCommand;
  readonly provisionerName: string;
  /** Its credentials, e.g. a ServiceAccount kubeconfig. */
  readonly kubeconfigPath: string;
  /** Namespace of the leader-election Lease (`POD_NAMESPACE`). */
  readonly namespace: string;
  /** The server's NFSv4 path for the export; default `/export`. */
  readonly exportPath?: string;
  /** `NFS_PATH` as spelled in the deployment; default `exportPath`. */
  readonly nfsPath?: string;
}

/** A provisioner process and the NFS server it provisions on. */
export interface NfsProvisionerUnderTest {
  readonly provisionerName: string;
  readonly server: NfsServer;
  readonly program: RunningProgram;
  /** Stops the provisioner gracefully, then the server; resolves with the provisioner's exit code. */
  stop(): Promise<number | null>;
}

/** Starts a ganesha export and the provisioner for it. */
export async function startNfsProvisioner(
  options: StartNfsProvisionerOptions,
): Promise<NfsProvisionerUnderTest> {
  const server = await startNfsServer({ exportPath: options.exportPath ?? '/export' });
  try {
    const program = await startProgram({
      command: options.command.command,
      args: [...options.command.args, '--mount-root', server.exportDir],
      env: {
        PATH: process.env.PATH ?? '',
        NFS_SERVER: server.host,
        NFS_PATH: options.nfsPath ?? server.exportPath,
        PROVISIONER_NAME: options.provisionerName,
        POD_NAMESPACE: options.namespace,
        KUBECONFIG: options.kubeconfigPath,
        METRICS_PORT: '0',
      },
    });
    return {
      provisionerName: options.provisionerName,
      server,
      program,
      async stop() {
        const code = await program.stop();
        await server.stop();
        return code;
      },
    };
  } catch (err) {
    await server.stop();
    throw err;
  }
}

/**
 * Proves that a PV points at the directory the provisioner made: writes `probe.txt` to the PV's
 * `server:path` over NFS and reads it back from the exported directory on disk. Resolves with the
 * volume directory relative to the export; rejects when the PV names another server, a path outside
 * the export, or a directory where the file does not land.
 */
export async function reachVolumeOverNfs(server: NfsServer, pv: V1PersistentVolume): Promise<string> {
  const nfs = pv.spec?.nfs;
  if (nfs?.server !== server.host) throw new Error(`PV ${pv.metadata?.name} names server ${nfs?.server}`);
  const relative = posix.relative(server.exportPath, nfs.path);
  if (relative === '' || relative.startsWith('..')) {
    throw new Error(`PV ${pv.metadata?.name} path ${nfs.path} is not below the export ${server.exportPath}`);
  }
  const content = `probe for ${pv.metadata?.name}\n`;
  await writeNfsFile(server.location(posix.join(nfs.path, 'probe.txt')), content);
  const onDisk = await readFile(join(server.exportDir, relative, 'probe.txt'), 'utf8').catch(() => undefined);
  if (onDisk !== content) {
    throw new Error(`a file written to ${nfs.server}:${nfs.path} did not land in ${relative} on the export`);
  }
  return relative;
}
