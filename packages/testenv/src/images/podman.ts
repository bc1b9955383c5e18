/**
 * Every podman call of the project, with the adjustments this kind of machine needs (rootful podman,
 * hybrid cgroups, no CAP_SYS_RESOURCE): the `runc` runtime, because crun refuses the hybrid cgroup
 * layout, and rlimits at or below the hard limit, because podman's defaults raise them and the kernel
 * refuses.
 */
import { spawn } from 'node:child_process';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { type RunCommandOptions, runCommand } from '../command.ts';

/** Global options that precede every podman subcommand. */
const globalOptions = ['--runtime', 'runc'] as const;

/** `run` and `build` options: rlimits podman may set without CAP_SYS_RESOURCE. */
export const containerLimits: readonly string[] = [
  '--ulimit',
  'nofile=1024:1024',
  '--ulimit',
  'nproc=1024:1024',
];

const missingHint = 'install podman and runc (`apt-get install -y podman runc`)';

/** Runs `podman <args>` to completion and resolves with its standard output. */
export function podman(args: readonly string[], options: RunCommandOptions = {}): Promise<string> {
  return runCommand('podman', [...globalOptions, ...args], { missingHint, ...options });
}

/** The argument vector of `podman <args>` for a long-running child process (e.g. `podman run`). */
export function podmanCommand(args: readonly string[]): { command: string; args: string[] } {
  return { command: 'podman', args: [...globalOptions, ...args] };
}

/** Whether the local image store holds `image`. */
export async function imageExists(image: string): Promise<boolean> {
  try {
    await podman(['image', 'exists', image]);
    return true;
  } catch (err) {
    if (err instanceof Error && err.name === 'MissingToolError') throw err;
    return false;
  }
}

/** Size in bytes of `image` (all its layers), as `podman images` reports it. */
export async function imageSize(image: string): Promise<number> {
  const size = Number((await podman(['image', 'inspect', '--format', '{{.Size}}', image])).trim());
  if (!Number.isFinite(size)) throw new Error(`podman reported no size for ${image}`);
  return size;
}

/**
 * Bytes of `image` gzip-compressed (`podman save` through gzip level 6): about what a registry stores
 * and a node pulls, whose layers are gzip-compressed tars.
 */
export async function compressedImageSize(image: string): Promise<number> {
  const child = spawn('podman', [...globalOptions, 'image', 'save', image], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', resolve);
  });
  let bytes = 0;
  const counter = new Writable({
    write(chunk: Buffer, _encoding, done) {
      bytes += chunk.length;
      done();
    },
  });
  await pipeline(child.stdout, createGzip({ level: 6 }), counter);
  const code = await exited;
  if (code !== 0) throw new Error(`podman image save ${image} exited with ${code}`);
  return bytes;
}

/** `406 MB`, `2.2 MB`: decimal megabytes, as podman and Docker print image sizes. */
export function formatImageSize(bytes: number): string {
  const megabytes = bytes / 1e6;
  return `${megabytes < 10 ? megabytes.toFixed(1) : Math.round(megabytes)} MB`;
}
