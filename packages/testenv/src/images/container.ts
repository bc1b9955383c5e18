/**
 * An image under test, run as a container on the host's network (so it reaches the testenv control
 * plane on 127.0.0.1) with the podman adjustments of {@link podman}. The container is removed when
 * stopped, also if it already exited or never started properly.
 */
import { randomBytes } from 'node:crypto';
import { type RunningProgram, startProgram } from '../program-process.ts';
import { containerLimits, podman, podmanCommand } from './podman.ts';

/** A host path visible in the container. */
export interface BindMount {
  readonly source: string;
  readonly target: string;
  readonly readOnly?: boolean;
}

/** Options of {@link startContainer}. */
export interface StartContainerOptions {
  readonly image: string;
  /** Arguments after the image (passed to its entry point). */
  readonly args?: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  readonly mounts?: readonly BindMount[];
  /** `uid[:gid]`; default the image's user. */
  readonly user?: string;
  /** `linux/arm64` to run an image of that platform (under emulation on x86-64); default the host's. */
  readonly platform?: string;
}

/** A running container. */
export interface RunningContainer {
  /** Its unique name, for `podman` commands. */
  readonly name: string;
  /** The `podman run` client, whose output is the container's. */
  readonly program: RunningProgram;
  /** Runs a command in the container and resolves with its standard output; rejects on non-zero. */
  exec(command: readonly string[]): Promise<string>;
  /**
   * Stops it (SIGTERM, then SIGKILL after `graceSeconds`) and removes it, whatever state it is in;
   * resolves with the container's exit code.
   */
  stop(graceSeconds?: number): Promise<number | null>;
}

/** Starts `options.image` in the foreground of a `podman run --rm` child process. */
export async function startContainer(options: StartContainerOptions): Promise<RunningContainer> {
  const name = `kube-provisioner-test-${randomBytes(4).toString('hex')}`;
  const args = ['run', '--rm', '--name', name, '--network=host', ...containerLimits];
  for (const [key, value] of Object.entries(options.env ?? {})) args.push('--env', `${key}=${value}`);
  for (const mount of options.mounts ?? []) {
    args.push('--volume', `${mount.source}:${mount.target}${mount.readOnly ? ':ro' : ''}`);
  }
  if (options.user !== undefined) args.push('--user', options.user);
  if (options.platform !== undefined) args.push('--platform', options.platform);
  args.push(options.image, ...(options.args ?? []));
  const { command, args: argv } = podmanCommand(args);
  const program = await startProgram({ command, args: argv, env: { PATH: process.env.PATH ?? '' } });
  return {
    name,
    program,
    exec: (command) => podman(['exec', name, ...command]),
    async stop(graceSeconds = 15) {
      // `podman run` passes SIGTERM on to the container and exits with its code; a client killed
      // after the grace period leaves the container behind, which the forced removal takes away.
      const code = await program.stop(graceSeconds * 1000);
      await podman(['rm', '--force', '--ignore', name]).catch(() => undefined);
      return code;
    },
  };
}

/** An HTTP response as seen from inside a container. */
export interface InsideResponse {
  readonly status: number;
  readonly body: string;
}

/**
 * GETs `url` from inside the container with its own Node (the project's images have no curl), so
 * a probe sees what kubelet's would: the container's network and its own listener.
 */
export async function fetchInside(container: RunningContainer, url: string): Promise<InsideResponse> {
  const script =
    'fetch(process.argv[1]).then(async (r) => process.stdout.write(JSON.stringify({ status: r.status, body: await r.text() })))';
  return JSON.parse(await container.exec(['node', '-e', script, url])) as InsideResponse;
}
