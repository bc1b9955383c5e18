/**
 * The bare clients of the compare's ceiling, each in a process of its own so that its CPU is its
 * alone: client-go (`bench-go create-pvs`), our client stack, and `node:http2` with no client code
 * (`bare-client.ts`, the least any Node.js client does per request). Each creates PVs of the
 * provisioned shape with the provisioner's concurrency and no client-side limit, after one warm-up
 * request, and reports the creates' wall time and its whole process's CPU over them.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { extname, join } from 'node:path';
import type { V1PersistentVolume } from '@kubernetes/client-node';
import { imageNodeFlags } from './ours-program.ts';

/** Which bare client: client-go, our client stack, or `node:http2` alone. */
export type BareClient = 'client-go' | 'ours' | 'node-http2';

/** Options of {@link createVolumesWithBareClient}. */
export interface BareClientOptions {
  /** The `bench-go` executable (client-go's side). */
  readonly goBinary: string;
  readonly kubeconfigPath: string;
  /** PV names are `<prefix>-<i>`. */
  readonly prefix: string;
  readonly count: number;
  readonly concurrency: number;
}

/** What a bare client reports. */
export interface BareClientResult {
  /** First create sent → last create answered. */
  readonly seconds: number;
  /** The process's CPU (every thread, user and system) over the same span. */
  readonly cpuSeconds: number;
}

/** The Node.js program of the `ours` and `node-http2` clients, beside this module in `src/` or `dist/`. */
const nodeProgram = join(import.meta.dirname, `bare-client${extname(import.meta.filename)}`);

/** The command and arguments that run `client` with `options`. */
export function bareClientCommand(
  client: BareClient,
  options: BareClientOptions,
): { readonly command: string; readonly args: string[] } {
  const shared = [
    `--kubeconfig=${options.kubeconfigPath}`,
    `--prefix=${options.prefix}`,
    `--count=${options.count}`,
    `--concurrency=${options.concurrency}`,
  ];
  if (client === 'client-go') return { command: options.goBinary, args: ['create-pvs', ...shared] };
  // The image's Node.js flags, as ours runs; type stripping when the bench runs from its sources.
  const source = nodeProgram.endsWith('.ts') ? ['--conditions=@kube-provisioner/source'] : [];
  return {
    command: process.execPath,
    args: [...source, ...imageNodeFlags, nodeProgram, `--client=${client}`, ...shared],
  };
}

/** Runs `client` over `template` (its name is replaced per PV) and resolves with what it reports. */
export async function createVolumesWithBareClient(
  client: BareClient,
  template: V1PersistentVolume,
  options: BareClientOptions,
): Promise<BareClientResult> {
  const { command, args } = bareClientCommand(client, options);
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  child.stdin.end(JSON.stringify(template));
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`bare client ${client} exited with ${String(code)}: ${stderr.trim()}`);
  return parseBareClientOutput(client, stdout);
}

/** Reads `{"seconds": …, "cpu_seconds": …}`, the line both programs print. */
export function parseBareClientOutput(client: BareClient, stdout: string): BareClientResult {
  const { seconds, cpu_seconds: cpuSeconds } = JSON.parse(stdout) as Record<string, unknown>;
  if (typeof seconds !== 'number' || typeof cpuSeconds !== 'number') {
    throw new Error(`bare client ${client} printed no seconds and cpu_seconds: ${stdout}`);
  }
  return { seconds, cpuSeconds };
}
