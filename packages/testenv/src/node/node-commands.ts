/**
 * The real node in the `kube-testenv` CLI: `up --node` and `exec --node` start one beside the control
 * plane (or say in one line why this machine cannot), `status` lists its processes, and `node-build`
 * builds its binaries and pause image ahead of the tests.
 */
import type { ControlPlane } from '../control-plane.ts';
import { ensureNodeBinaries } from './node-binaries.ts';
import { ensurePauseArchive } from './node-images.ts';
import { nodeProcessNames } from './node-processes.ts';
import { attachRealNode, type RealNode, RealNodeUnavailableError, startRealNode } from './real-node.ts';

/**
 * The control plane's real node: the running one, else a new one. When this machine cannot run a
 * node the reason is logged and the result is `undefined`, so the command goes on with fake nodes
 * only; any other failure rejects.
 */
export async function ensureRealNode(
  controlPlane: ControlPlane,
  options: { readonly stopOnExit: boolean; readonly log: (message: string) => void },
): Promise<RealNode | undefined> {
  const running = await attachRealNode(controlPlane.dir);
  if (running) return running;
  try {
    return await startRealNode(controlPlane, { stopOnExit: options.stopOnExit, onProgress: options.log });
  } catch (err) {
    if (!(err instanceof RealNodeUnavailableError)) throw err;
    options.log(`no real node: ${err.message}; continuing with fake nodes only`);
    return undefined;
  }
}

/** `status` lines of the real node in `dir`, or none when it has none running. */
export async function realNodeStatus(dir: string): Promise<string> {
  const node = await attachRealNode(dir);
  if (!node) return '';
  const processes = await node.processes();
  const lines = [`real node ${node.name} (${node.nodeIp}), state in ${node.dir}`];
  for (const name of nodeProcessNames) {
    const pid = processes[name];
    lines.push(`  ${name.padEnd(24)} ${pid === undefined ? 'stopped' : `running (pid ${pid})`}`);
  }
  return `${lines.join('\n')}\n`;
}

/** `node-build`: builds or verifies the node's binaries and pause image; prints their directory. */
export async function nodeBuildCommand(log: (message: string) => void): Promise<number> {
  const binaries = await ensureNodeBinaries({ onProgress: log });
  await ensurePauseArchive(binaries);
  process.stdout.write(`${binaries.dir}\n`);
  return 0;
}
