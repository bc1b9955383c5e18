/**
 * A provisioner as a child process, so its memory and CPU are its own and can be read from procfs,
 * and its start-up is the real one: ours (the shipped `kube-hostpath-provisioner` CLI), our library
 * alone (the custom-provisioner example: a directory and a PV per claim) or the Go reference
 * (`bench-go provisioner`, the Go library v13 in the shape of its hostpath example).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import { nodeArgs, type OursProgram } from './ours-program.ts';
import { type ProcessSample, sampleProcess } from './proc-stats.ts';

/**
 * Which provisioner: ours or the library example (as {@link prepareOurs} built them), or the Go
 * reference built by {@link ensureBenchGo}.
 */
export type Implementation =
  | {
      readonly name: 'ours' | 'library';
      readonly program: OursProgram;
      /**
       * The program's flags for its volume root and health port, where they are not hostpath's
       * (`--mode=shared --root --health-port`) or the example's (`--root --health-port`): the NFS CLIs'.
       */
      readonly placementFlags?: (root: string, healthPort: number) => readonly string[];
    }
  | { readonly name: 'go'; readonly binary: string };

/** Options of {@link startProvisioner}. */
export interface ProvisionerProcessOptions {
  readonly implementation: Implementation;
  readonly kubeconfigPath: string;
  readonly root: string;
  readonly provisionerName: string;
  /** Namespace of the leader-election Lease. */
  readonly leaseNamespace: string;
  /** Extra CLI flags. */
  readonly extraArgs?: readonly string[];
  /** Extra Node.js flags, e.g. `--cpu-prof`; ours only. */
  readonly nodeFlags?: readonly string[];
  /** How long start-up may take. Default 120 s. */
  readonly readyTimeoutMs?: number;
  /** A file that receives the provisioner's whole log (stderr), for reading after a run. */
  readonly logFile?: string;
}

/** A running provisioner. Times are `performance.now()` milliseconds of the bench process. */
export interface ProvisionerProcess {
  readonly pid: number;
  readonly spawnedAt: number;
  /** When the controller logged that its caches were synced and its workers started. */
  readonly syncedAt: number;
  /** When `/readyz` first answered 200; the Go reference serves none, so there it is `syncedAt`. */
  readonly readyzAt: number;
  sample(): Promise<ProcessSample>;
  /**
   * The event-loop delay p99 (ms) since the previous call, from prom-client's
   * `nodejs_eventloop_lag_p99_seconds`, whose histogram every scrape of `/metrics` resets; the Go
   * reference has no event loop, so `undefined` there.
   */
  eventLoopDelayP99Ms(): Promise<number | undefined>;
  /** SIGTERM, then waits for a graceful exit (SIGKILL after 30 s). */
  stop(): Promise<void>;
}

/** The controller's info line once caches are synced, just before its workers start; the Go library logs the same. */
const startedMessage = 'Started provisioner controller';
const probeIntervalMs = 50;
const stopGraceMs = 30_000;
const logTailLines = 40;

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  if (address === null || typeof address === 'string') throw new Error('no TCP port assigned');
  return address.port;
}

/** The command line of ours (hostpath in shared mode, or the library example), with the port of its health server. */
async function oursCommand(
  program: OursProgram,
  placementFlags: (root: string, healthPort: number) => readonly string[],
  options: ProvisionerProcessOptions,
): Promise<{ file: string; args: string[]; port: number }> {
  const port = await freePort();
  const args = nodeArgs(program, options.nodeFlags ?? [], [
    ...placementFlags(options.root, port),
    `--kubeconfig=${options.kubeconfigPath}`,
    `--provisioner-name=${options.provisionerName}`,
    `--leader-election-namespace=${options.leaseNamespace}`,
    ...(options.extraArgs ?? []),
  ]);
  return { file: process.execPath, args, port };
}

function goCommand(
  binary: string,
  options: ProvisionerProcessOptions,
): { file: string; args: string[]; port: undefined } {
  const args = [
    'provisioner',
    `--root=${options.root}`,
    `--kubeconfig=${options.kubeconfigPath}`,
    `--provisioner-name=${options.provisionerName}`,
    `--leader-election-namespace=${options.leaseNamespace}`,
    ...(options.extraArgs ?? []),
  ];
  return { file: binary, args, port: undefined };
}

/** Starts the provisioner and resolves once it is ready by all its signals. */
export async function startProvisioner(options: ProvisionerProcessOptions): Promise<ProvisionerProcess> {
  const { implementation } = options;
  const command =
    implementation.name === 'go'
      ? goCommand(implementation.binary, options)
      : await oursCommand(
          implementation.program,
          implementation.placementFlags ??
            ((root, port) => [
              ...(implementation.name === 'ours' ? ['--mode=shared'] : []),
              `--root=${root}`,
              `--health-port=${port}`,
            ]),
          options,
        );
  const spawnedAt = performance.now();
  const child = spawn(command.file, command.args, { stdio: ['ignore', 'ignore', 'pipe'] });
  const exited = once(child, 'exit');
  const tail: string[] = [];
  if (options.logFile !== undefined) child.stderr?.pipe(createWriteStream(options.logFile));
  const synced = new Promise<number>((resolve, reject) => {
    createInterface({ input: child.stderr as NodeJS.ReadableStream }).on('line', (line) => {
      tail.push(line);
      if (tail.length > logTailLines) tail.shift();
      if (line.includes(startedMessage)) resolve(performance.now());
    });
    exited.then(
      ([code]) => reject(new Error(`provisioner exited with ${String(code)} before it was ready`)),
      reject,
    );
  });
  const deadline = AbortSignal.timeout(options.readyTimeoutMs ?? 120_000);
  try {
    const syncing = raceAbort(synced, deadline);
    const [syncedAt, readyzAt] = await Promise.all([
      syncing,
      command.port === undefined ? syncing : raceAbort(probeReady(command.port, deadline), deadline),
    ]);
    return {
      pid: child.pid as number,
      spawnedAt,
      syncedAt,
      readyzAt,
      sample: () => sampleProcess(child.pid as number),
      eventLoopDelayP99Ms: async () =>
        command.port === undefined ? undefined : scrapeEventLoopDelayP99Ms(command.port),
      stop: () => stopChild(child, exited),
    };
  } catch (err) {
    await stopChild(child, exited);
    throw new Error(`provisioner did not start: ${String(err)}\n${tail.join('\n')}`);
  }
}

function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      signal.addEventListener('abort', () => reject(signal.reason), { once: true });
    }),
  ]);
}

async function probeReady(port: number, signal: AbortSignal): Promise<number> {
  for (;;) {
    try {
      const response = await fetch(`http://127.0.0.1:${port}/readyz`, { signal });
      await response.arrayBuffer();
      if (response.ok) return performance.now();
    } catch {
      // Refused until the server listens; only the deadline ends the probing.
      signal.throwIfAborted();
    }
    await new Promise((resolve) => setTimeout(resolve, probeIntervalMs));
  }
}

const eventLoopDelayP99 = /^nodejs_eventloop_lag_p99_seconds(?:\{[^}]*\})? (\S+)$/mu;

async function scrapeEventLoopDelayP99Ms(port: number): Promise<number> {
  const response = await fetch(`http://127.0.0.1:${port}/metrics`);
  const text = await response.text();
  const value = eventLoopDelayP99.exec(text)?.[1];
  if (!response.ok || value === undefined) {
    throw new Error(`no nodejs_eventloop_lag_p99_seconds on port ${port} (HTTP ${response.status})`);
  }
  return Number(value) * 1000;
}

async function stopChild(child: ChildProcess, exited: Promise<unknown>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), stopGraceMs);
  await exited;
  clearTimeout(timer);
}
