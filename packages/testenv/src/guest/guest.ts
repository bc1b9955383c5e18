/**
 * A real Linux kernel for tests that need what the host's kernel lacks (an NFS client, quotas):
 * User-Mode Linux, an ordinary process, booted from the cached {@link GuestImage} with a throw-away
 * copy-on-write overlay, in a private network namespace (see {@link ./guest-network.ts}). A host
 * directory is shared in with hostfs, the host's test NFS servers and API server are reachable
 * from inside, and programs run there through the guest's agent.
 */

import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { transform } from 'esbuild';
import { runCommand } from '../command.ts';
import type { NfsServer } from '../nfs-server.ts';
import { isProcessAlive, stopProcessGroup } from '../process-group.ts';
import { startReaper } from '../reaper.ts';
import { stopWaiting, waitFor } from '../wait-for.ts';
import { type EnsureGuestImageOptions, ensureGuestImage, type GuestImage } from './guest-image.ts';
import { bootParameter, gatewayAddress, guestShareMount } from './guest-init.ts';
import { type GuestNetwork, startGuestNetwork, tapDevice } from './guest-network.ts';
import {
  agentRequest,
  type GuestProgram,
  type GuestProgramOptions,
  type GuestRunResult,
  runInGuest,
  spawnInGuest,
} from './guest-programs.ts';
import { xstateShim } from './uml-xstate-shim.ts';

/** Options of {@link startGuest}. */
export interface StartGuestOptions {
  /** A built image; default the cached guest image (`kube-testenv guest-image`, which builds it on a cache miss). */
  readonly image?: GuestImage;
  /** Options of the guest image build when `image` is not given. */
  readonly imageOptions?: EnsureGuestImageOptions;
  /** Guest memory; default 512 MiB: the guest system takes 50 MB, a provisioner under test about 100 MB. */
  readonly memoryMiB?: number;
  /** Size of the sparse scratch disk mounted at `/scratch`; default 8 GiB. */
  readonly scratchDiskGiB?: number;
  /** How long the boot may take until the agent answers; default 60 s. */
  readonly bootTimeoutMs?: number;
  /** Receives progress lines (image build, boot). */
  readonly onProgress?: (message: string) => void;
}

/** A test NFS server as the guest reaches it: `address:2049`, as a PV's `nfs.server` names it. */
export interface GuestNfsEndpoint {
  /** The address PVs name and the guest mounts, e.g. `10.0.3.10`. */
  readonly address: string;
  /** Always 2049, so PVs need no `port=` mount option. */
  readonly port: number;
  /** The server's NFSv4 path of the export. */
  readonly exportPath: string;
  /** Forwards new connections to another port on the host, e.g. a restarted server's. */
  retarget(hostPort: number): Promise<void>;
  /** Cuts the route: open connections close and new ones are refused, as if the server vanished. */
  cut(): Promise<void>;
}

/** Options of {@link Guest.sh}. */
export interface GuestShellOptions extends GuestProgramOptions {
  /** The script's positional parameters, `$1`, `$2`…: values that need no quoting. */
  readonly args?: readonly string[];
  /** Killed after this long; default 60 s. */
  readonly timeoutMs?: number;
}

/** A booted guest. */
export interface Guest {
  /** The guest's state directory on the host (overlay, console log, sockets, share). */
  readonly dir: string;
  /** The host directory the guest sees at {@link Guest.shareMount}. */
  readonly shareDir: string;
  /** `/share`. */
  readonly shareMount: string;
  readonly image: GuestImage;
  /** Runs a program to completion (default timeout 60 s). */
  run(
    argv: readonly string[],
    options?: GuestProgramOptions & { readonly timeoutMs?: number },
  ): Promise<GuestRunResult>;
  /**
   * Runs a shell script (`sh -ec`), with `args` as `$1`, `$2`…, and resolves with its standard
   * output; rejects on a non-zero exit.
   */
  sh(script: string, options?: GuestShellOptions): Promise<string>;
  /** Starts a long-running program, e.g. a provisioner. */
  spawn(argv: readonly string[], options?: GuestProgramOptions): Promise<GuestProgram>;
  /** Makes a host test NFS server reachable from the guest at a new address, port 2049. */
  exposeNfsServer(server: Pick<NfsServer, 'port' | 'exportPath'>): Promise<GuestNfsEndpoint>;
  /**
   * Makes the API server of a kubeconfig (on the host's loopback) reachable from inside under the
   * same URL, copies the kubeconfig into the share and resolves with its path inside the guest.
   */
  kubeconfig(path: string): Promise<string>;
  /** The path inside the guest of a file or directory below {@link Guest.shareDir}. */
  guestPath(hostPath: string): string;
  /** The kernel's console output so far. */
  console(): Promise<string>;
  /** Powers the guest off, stops its network and removes its state directory. */
  stop(): Promise<void>;
}

/** The guest did not boot; the message carries the tail of its console. */
export class GuestBootError extends Error {
  override readonly name = 'GuestBootError';
}

/** Guest addresses handed to exposed NFS servers: 10.0.3.10, .11, … */
const firstNfsHost = 10;

function agentScript(): string {
  const extension = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
  return fileURLToPath(new URL(`./guest-agent${extension}`, import.meta.url));
}

function tail(text: string, lines = 40): string {
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}

/** Boots a guest; stop it with {@link Guest.stop} (a watchdog stops it if this process dies). */
export async function startGuest(options: StartGuestOptions = {}): Promise<Guest> {
  const report = options.onProgress ?? (() => {});
  const image =
    options.image ??
    (await ensureGuestImage({
      ...options.imageOptions,
      ...(options.onProgress ? { onProgress: report } : {}),
    }));
  const dir = await mkdtemp(join(tmpdir(), 'testenv-guest-'));
  const shareDir = join(dir, 'share');
  const pidsDir = join(dir, 'pids');
  const consoleFile = join(dir, 'console.log');
  await Promise.all([mkdir(join(shareDir, '.testenv'), { recursive: true }), mkdir(pidsDir)]);
  const reaper = startReaper(pidsDir);
  // Plain JavaScript: Node.js's own type stripping costs the guest seconds of CPU at every boot.
  const agentFile = join(shareDir, '.testenv', 'guest-agent.mjs');
  const { code } = await transform(await readFile(agentScript(), 'utf8'), { loader: 'ts', format: 'esm' });
  await writeFile(agentFile, code);

  let network: GuestNetwork | undefined;
  let kernelPid: number | undefined;
  const stopAll = async (): Promise<void> => {
    if (kernelPid !== undefined) await stopProcessGroup(kernelPid, 5_000);
    await network?.stop();
    reaper.release();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    network = await startGuestNetwork(dir, (text) => report(`guest network: ${text.trimEnd()}`));
    await writeFile(join(pidsDir, 'inside-forwarder.pid'), `${network.inside.pid}\n`);
    await writeFile(join(pidsDir, 'outside-forwarder.pid'), `${network.outside.pid}\n`);
    const scratch = join(dir, 'scratch.img');
    await runCommand('mke2fs', [
      '-q',
      '-t',
      'ext4',
      '-E',
      'lazy_itable_init=1',
      scratch,
      `${options.scratchDiskGiB ?? 8}G`,
    ]);
    const started = Date.now();
    kernelPid = await bootKernel({
      enter: network.enter,
      kernel: image.kernel,
      preload: await xstateShim(image.dir),
      args: [
        `mem=${options.memoryMiB ?? 512}M`,
        // The kernel keeps its pid file and management socket under uml_dir/umid; without it, $HOME/.uml.
        `uml_dir=${dir}`,
        'umid=uml',
        `ubd0=${join(dir, 'root.cow')},${image.rootImage}`,
        `ubd1=${scratch}`,
        'root=/dev/ubda',
        'rw',
        'init=/sbin/testenv-init',
        'con=null',
        'ssl=null',
        'con0=null,fd:1',
        `vec0:transport=tap,ifname=${tapDevice}`,
        `${bootParameter.share}=${shareDir}`,
        `${bootParameter.agent}=${join(guestShareMount, '.testenv', basename(agentFile))}`,
      ],
      consoleFile,
    });
    await writeFile(join(pidsDir, 'kernel.pid'), `${kernelPid}\n`);
    const pid = kernelPid;
    const agentSocket = network.agentSocket;
    await waitFor(
      async () => {
        if (!isProcessAlive(pid)) throw stopWaiting(new Error('the guest kernel exited during boot'));
        return (await agentRequest(agentSocket, 'GET', '/health')).status === 200;
      },
      {
        timeoutMs: options.bootTimeoutMs ?? 60_000,
        intervalMs: 100,
        description: 'the guest agent to answer',
      },
    );
    report(`guest booted in ${((Date.now() - started) / 1000).toFixed(1)}s (${image.key})`);
  } catch (err) {
    const consoleText = await readFile(consoleFile, 'utf8').catch(() => '');
    await stopAll();
    throw new GuestBootError(`the test guest did not boot: ${(err as Error).message}\n${tail(consoleText)}`, {
      cause: err,
    });
  }
  return runningGuest({ dir, shareDir, image, network, kernelPid, consoleFile, stopAll });
}

async function bootKernel(spec: {
  enter: readonly string[];
  kernel: string;
  args: readonly string[];
  consoleFile: string;
  preload: string;
}): Promise<number> {
  const output = openSync(spec.consoleFile, 'a');
  try {
    const [file = 'nsenter', ...enterArgs] = spec.enter;
    const child = spawn(file, [...enterArgs, spec.kernel, ...spec.args], {
      detached: true,
      stdio: ['ignore', output, output],
      env: {
        PATH: process.env.PATH ?? '',
        HOME: tmpdir(),
        TMPDIR: process.env.TMPDIR ?? tmpdir(),
        LD_PRELOAD: spec.preload,
      },
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

function runningGuest(state: {
  dir: string;
  shareDir: string;
  image: GuestImage;
  network: GuestNetwork;
  kernelPid: number;
  consoleFile: string;
  stopAll: () => Promise<void>;
}): Guest {
  const { network, shareDir } = state;
  const socket = network.agentSocket;
  const apiPorts = new Map<number, Promise<void>>();
  let nfsCount = 0;
  let stopped: Promise<void> | undefined;
  const guestPath = (hostPath: string): string => {
    if (hostPath !== shareDir && !hostPath.startsWith(`${shareDir}/`)) {
      throw new Error(`${hostPath} is not below the share directory ${shareDir}`);
    }
    return guestShareMount + hostPath.slice(shareDir.length);
  };
  const guest: Guest = {
    dir: state.dir,
    shareDir,
    shareMount: guestShareMount,
    image: state.image,
    run: (argv, options) => runInGuest(socket, argv, options),
    async sh(script, options = {}) {
      const result = await runInGuest(socket, ['sh', '-ec', script, 'sh', ...(options.args ?? [])], options);
      if (result.status !== 0) {
        throw new Error(
          `guest: \`${script}\` exited with ${result.status ?? result.signal}:\n${result.stderr}${result.stdout}`,
        );
      }
      return result.stdout;
    },
    spawn: (argv, options) => spawnInGuest(socket, argv, options),
    async exposeNfsServer(server) {
      const key = `nfs-${nfsCount}`;
      const address = `10.0.3.${firstNfsHost + nfsCount}`;
      nfsCount++;
      await network.exposeHostPort(key, address, 2049, server.port);
      return {
        address,
        port: 2049,
        exportPath: server.exportPath,
        retarget: (hostPort) => network.retargetHostPort(key, hostPort),
        cut: () => network.cutHostPort(key),
      };
    },
    async kubeconfig(path) {
      const text = await readFile(path, 'utf8');
      const server = /"?server"?\s*:\s*"?https:\/\/127\.0\.0\.1:(\d+)/u.exec(text);
      if (server?.[1] === undefined)
        throw new Error(`${path} names no API server on https://127.0.0.1:<port>`);
      const port = Number(server[1]);
      let exposed = apiPorts.get(port);
      if (exposed === undefined) {
        exposed = (async () => {
          await network.exposeHostPort(`api-${port}`, gatewayAddress, port, port);
          const response = await agentRequest(socket, 'POST', '/forward', {
            listen: { host: '127.0.0.1', port },
            connect: { host: gatewayAddress, port },
          });
          if (response.status >= 300) throw new Error(`guest agent /forward: ${response.body}`);
        })();
        apiPorts.set(port, exposed);
      }
      await exposed;
      const copy = join(shareDir, '.testenv', 'kubeconfigs', basename(path));
      await mkdir(join(shareDir, '.testenv', 'kubeconfigs'), { recursive: true });
      await writeFile(copy, text, { mode: 0o600 });
      return guestPath(copy);
    },
    guestPath,
    console: () => readFile(state.consoleFile, 'utf8').catch(() => ''),
    stop() {
      stopped ??= (async () => {
        // The overlay is thrown away: power off at once, no clean shutdown needed.
        await agentRequest(socket, 'POST', '/poweroff').catch(() => undefined);
        await waitFor(() => !isProcessAlive(state.kernelPid), {
          timeoutMs: 10_000,
          intervalMs: 50,
          description: 'the guest to power off',
        }).catch(() => undefined);
        await state.stopAll();
      })();
      return stopped;
    },
  };
  return guest;
}
