/**
 * A watchdog that tears a real node down when the process that started it dies, even by SIGKILL:
 * the control plane's reaper (reaper.ts) only kills process groups, while a node also leaves
 * containers, shims, mounts, a bridge and changed sysctls behind. It runs this module as its own
 * Node.js process, holding a pipe from the owner: a `release` line means the owner stops the node
 * itself; end of input without one means the owner is gone.
 */
import { spawn } from 'node:child_process';
import type { Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { nodeLayout } from './node-layout.ts';
import { teardownNode } from './node-teardown.ts';

/** Releases a node reaper once its owner stops the node itself. */
export interface NodeReaper {
  release(): void;
}

/** Starts a watchdog for the node of the control plane in `controlPlaneDir`. */
export function startNodeReaper(controlPlaneDir: string): NodeReaper {
  // This very module: `.ts` when run from source (Node strips the types), `.js` once built.
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), controlPlaneDir], {
    detached: true,
    stdio: ['pipe', 'ignore', 'ignore'],
  });
  child.unref();
  const stdin = child.stdin;
  (stdin as Socket | null)?.unref();
  stdin?.on('error', () => {});
  return {
    release(): void {
      stdin?.end('release\n');
    },
  };
}

async function watch(controlPlaneDir: string): Promise<void> {
  let input = '';
  process.stdin.setEncoding('utf8');
  for await (const chunk of process.stdin) input += String(chunk);
  if (input.split('\n').includes('release')) return;
  await teardownNode(nodeLayout(controlPlaneDir));
}

if (import.meta.main) {
  const [dir] = process.argv.slice(2);
  if (dir) await watch(dir);
}
