/**
 * A watchdog that tears a real node down when the process that started it dies, even by SIGKILL:
 * the control plane's reaper (reaper.ts) only kills process groups, while a node also leaves
 * containers, shims, mounts, a bridge and changed sysctls behind. It runs this module as its own
 * Node.js process, holding a pipe from the owner: a `release` line means the owner stops the node
 * itself; end of input without one means the owner is gone.
 */
import { fileURLToPath } from 'node:url';
import { type Reaper, startWatchdog } from '../reaper.ts';
import { nodeLayout } from './node-layout.ts';
import { teardownNode } from './node-teardown.ts';

/** Starts a watchdog for the node of the control plane in `controlPlaneDir`. */
export function startNodeReaper(controlPlaneDir: string): Reaper {
  // This very module: `.ts` when run from source (Node strips the types), `.js` once built.
  return startWatchdog(process.execPath, [fileURLToPath(import.meta.url), controlPlaneDir], 'release\n');
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
