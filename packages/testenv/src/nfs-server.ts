/**
 * A real NFSv4 server for end-to-end tests: nfs-ganesha with its VFS backend, exporting a directory
 * on disk at 127.0.0.1 on a free unprivileged port. A provisioner under test works on `exportDir`
 * (as a pod works on its NFS mount), while tests reach `server:path` of the PVs it makes over NFS.
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import { freePorts } from './free-ports.ts';
import { ganeshaConfig } from './ganesha-config.ts';
import type { NfsLocation } from './libnfs.ts';
import { assertNfsTools } from './nfs-tools.ts';
import { isProcessAlive, stopProcessGroup } from './process-group.ts';
import { startReaper } from './reaper.ts';
import { stopWaiting, waitFor } from './wait-for.ts';

/** Options of {@link startNfsServer}. */
export interface StartNfsServerOptions {
  /** Directory to export; default `<dir>/export`, removed by {@link NfsServer.stop}. */
  readonly exportDir?: string;
  /** NFSv4 path clients see the export under (the provisioner's `NFS_PATH`); default `/export`. */
  readonly exportPath?: string;
  /** How long ganesha may take to serve; default 60 s for contended machines. */
  readonly readyTimeoutMs?: number;
  /** `root` exports with `root_squash`: root's requests run as the anonymous user. Default `none`. */
  readonly squash?: 'none' | 'root';
  /** Export read-only; default false. */
  readonly readOnly?: boolean;
}

/** A running ganesha. */
export interface NfsServer {
  /** Address clients use and PVs name: `127.0.0.1`. */
  readonly host: string;
  /** TCP port of the NFS service. */
  readonly port: number;
  /** NFSv4 path of the export, normalised (`/` or `/a/b`). */
  readonly exportPath: string;
  /** The exported directory on disk. */
  readonly exportDir: string;
  /** State directory: `ganesha.conf`, `ganesha.log`, pid and recovery files. */
  readonly dir: string;
  /** Where a server-side path (`exportPath` or below it) is reached from a client. */
  location(path: string): NfsLocation;
  /** ganesha's log so far, for diagnosing a failed test. */
  log(): Promise<string>;
  /** Stops ganesha (SIGTERM, SIGKILL after 10 s) and removes the state directory. */
  stop(): Promise<void>;
}

/** ganesha did not come up; the message carries the tail of its log. */
export class NfsServerStartError extends Error {
  override readonly name = 'NfsServerStartError';
}

const host = '127.0.0.1';
const startAttempts = 3;
/** ganesha logs this once every listener and export is in place. */
const readyLine = 'NFS SERVER INITIALIZED';

function portAccepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

function tail(text: string, lines = 30): string {
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}

/**
 * Starts ganesha in the foreground in its own process group, retrying with a new port when the one
 * found free was taken meanwhile. A watchdog stops it if the calling process dies without
 * {@link NfsServer.stop}.
 *
 * @throws NfsToolsMissingError naming the Debian packages to install.
 * @throws NfsServerStartError when ganesha exits or does not serve within the timeout.
 */
export async function startNfsServer(options: StartNfsServerOptions = {}): Promise<NfsServer> {
  assertNfsTools();
  const exportPath = posix.normalize(`/${options.exportPath ?? '/export'}/`).replace(/(.)\/$/u, '$1');
  const dir = await mkdtemp(join(tmpdir(), 'nfs-ganesha-'));
  const exportDir = options.exportDir ?? join(dir, 'export');
  const configFile = join(dir, 'ganesha.conf');
  const logFile = join(dir, 'ganesha.log');
  const pidsDir = join(dir, 'pids');
  await Promise.all([mkdir(exportDir, { recursive: true }), mkdir(pidsDir)]);
  const reaper = startReaper(pidsDir);
  const readyTimeoutMs = options.readyTimeoutMs ?? 60_000;

  const cleanUp = async (pid: number | undefined): Promise<void> => {
    if (pid !== undefined) await stopProcessGroup(pid);
    reaper.release();
    await rm(dir, { recursive: true, force: true });
  };

  for (let attempt = 1; ; attempt++) {
    const [port = 0] = await freePorts(1);
    await writeFile(
      configFile,
      ganeshaConfig({
        port,
        exportDir,
        pseudoPath: exportPath,
        recoveryDir: join(dir, 'recovery'),
        squash: options.squash,
        readOnly: options.readOnly,
      }),
    );
    await rm(logFile, { force: true });
    const pid = await launch(configFile, logFile, join(dir, 'ganesha.pid'));
    await writeFile(join(pidsDir, 'ganesha.pid'), `${pid}\n`);
    const log = (): Promise<string> => readFile(logFile, 'utf8').catch(() => '');
    try {
      await waitFor(
        async () => {
          if (!isProcessAlive(pid)) throw stopWaiting(new Error('ganesha.nfsd exited during start-up'));
          return (await log()).includes(readyLine) && (await portAccepts(port));
        },
        { timeoutMs: readyTimeoutMs, intervalMs: 100, description: `ganesha to serve on ${host}:${port}` },
      );
    } catch (err) {
      const text = await log();
      await stopProcessGroup(pid);
      if (text.includes('Address already in use') && attempt < startAttempts) continue;
      await cleanUp(undefined);
      throw new NfsServerStartError(`NFS server failed to start: ${(err as Error).message}\n${tail(text)}`, {
        cause: err,
      });
    }
    return {
      host,
      port,
      exportPath,
      exportDir,
      dir,
      location: (path) => ({ server: host, port, path }),
      log,
      stop: () => cleanUp(pid),
    };
  }
}

async function launch(configFile: string, logFile: string, pidFile: string): Promise<number> {
  const output = openSync(logFile, 'a');
  try {
    // -F: foreground, so the process we hold is the server; -L/-p keep everything in the state dir.
    const child = spawn('ganesha.nfsd', ['-F', '-f', configFile, '-L', logFile, '-p', pidFile], {
      detached: true,
      stdio: ['ignore', output, output],
    });
    const pid = await new Promise<number>((resolve, reject) => {
      child.once('error', reject);
      child.once('spawn', () => resolve(child.pid ?? 0));
    });
    child.unref();
    return pid;
  } finally {
    closeSync(output);
  }
}
