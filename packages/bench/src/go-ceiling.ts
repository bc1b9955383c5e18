/**
 * The Go-client ceiling: `bench-go create-pvs`, a bare client-go client with no client-side limit,
 * creates PVs of the provisioned shape with the provisioner's concurrency, over client-go's own
 * transport (HTTP/2 to a TLS API server). Set beside the same work done by our client stack, it
 * measures our client's per-request cost, not the API server's.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import type { V1PersistentVolume } from '@kubernetes/client-node';

/** Options of {@link createVolumesWithGoClient}. */
export interface GoCeilingOptions {
  readonly binary: string;
  readonly kubeconfigPath: string;
  /** PV names are `<prefix>-<i>`. */
  readonly prefix: string;
  readonly count: number;
  readonly concurrency: number;
}

/** Creates the PVs with the Go client and resolves with the seconds the creates took (after a warm-up request). */
export async function createVolumesWithGoClient(
  template: V1PersistentVolume,
  options: GoCeilingOptions,
): Promise<number> {
  const child = spawn(
    options.binary,
    [
      'create-pvs',
      `--kubeconfig=${options.kubeconfigPath}`,
      `--prefix=${options.prefix}`,
      `--count=${options.count}`,
      `--concurrency=${options.concurrency}`,
    ],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
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
  if (code !== 0) throw new Error(`bench-go create-pvs exited with ${String(code)}: ${stderr.trim()}`);
  const { seconds } = JSON.parse(stdout) as { seconds?: unknown };
  if (typeof seconds !== 'number') throw new Error(`bench-go create-pvs printed no seconds: ${stdout}`);
  return seconds;
}
