/**
 * A user-space NFSv4 client for tests, through libnfs's `nfs-cat`, `nfs-cp` and `nfs-ls`: it reaches
 * a server's `server:path` exactly as a kubelet mount of a PersistentVolume would, without a kernel
 * mount or privileges.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MissingToolError } from './command.ts';

/** A path on an NFS server, as a PV's `spec.nfs` names it, plus the port of a test server. */
export interface NfsLocation {
  /** Host name or address, e.g. `127.0.0.1`. */
  readonly server: string;
  /** TCP port of the NFS service (2049 on a real server). */
  readonly port: number;
  /** Absolute path in the server's NFSv4 namespace. */
  readonly path: string;
}

/** One `nfs-*` invocation may take this long before it counts as hung. */
const commandTimeoutMs = 60_000;

/**
 * The libnfs URL of a location. libnfs 4.0 refuses `host:port`, so the port travels as `nfsport`;
 * `version=4` keeps it off rpcbind and the MOUNT protocol. Characters that URLs would need to escape
 * are refused: libnfs does not decode them.
 */
export function nfsUrl(location: NfsLocation): string {
  if (!location.path.startsWith('/')) throw new Error(`NFS path must be absolute: ${location.path}`);
  if (/[\s?#%&]/u.test(location.path))
    throw new Error(`NFS path not expressible as a libnfs URL: ${location.path}`);
  // libnfs splits a file URL at its last slash into the path to mount and the file, and rejects an
  // empty mount path: a file directly under `/` needs the doubled slash (`//name`) to mount `/`.
  const path = /^\/[^/]+$/u.test(location.path) ? `/${location.path}` : location.path;
  return `nfs://${location.server}${path}?version=4&nfsport=${location.port}`;
}

function run(tool: string, args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(tool, args, { timeout: commandTimeoutMs, maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      if (!err) {
        resolve(stdout);
        return;
      }
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
        reject(new MissingToolError(tool, 'install the Debian package libnfs-utils'));
        return;
      }
      const why = err.killed ? `timed out after ${commandTimeoutMs}ms` : `failed (${err.code ?? err.signal})`;
      reject(new Error(`${tool} ${args.join(' ')} ${why}: ${`${stderr}${stdout}`.trim()}`));
    });
  });
}

/** The content of a file, read over NFS. */
export function readNfsFile(location: NfsLocation): Promise<string> {
  return run('nfs-cat', [nfsUrl(location)]);
}

/** Creates or replaces a file over NFS. */
export async function writeNfsFile(location: NfsLocation, content: string): Promise<void> {
  // nfs-cp copies files, not standard input: stage the content locally first.
  const dir = await mkdtemp(join(tmpdir(), 'libnfs-'));
  try {
    const source = join(dir, 'content');
    await writeFile(source, content);
    await run('nfs-cp', [source, nfsUrl(location)]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Names in a directory, read over NFS, sorted. */
export async function listNfsDirectory(location: NfsLocation): Promise<string[]> {
  const output = await run('nfs-ls', [nfsUrl(location)]);
  // `mode links uid gid size name`; the name may contain spaces.
  return output
    .split('\n')
    .map((line) => /^\S+\s+\d+\s+\S+\s+\S+\s+\d+ (.+)$/u.exec(line)?.[1])
    .filter((name): name is string => name !== undefined && name !== '.' && name !== '..')
    .sort();
}
