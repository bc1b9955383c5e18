/**
 * Stops a real node and undoes everything it did, in an order that works whatever state it is in
 * (running, half started, or left behind by a process that died): processes, containers, shims,
 * mounts, the bridge, then the host's sysctls and fixed paths. Idempotent.
 */
import { readdir, readFile, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { runCommand } from '../command.ts';
import { stopProcessGroup } from '../process-group.ts';
import { restoreHost } from './host-state.ts';
import { type NodeLayout, nodeLayout, shimSocketDir } from './node-layout.ts';
import { type NodeProcessName, nodeProcessNames, stopNodeProcess } from './node-processes.ts';
import { type NodeState, readNodeState } from './node-state.ts';

/**
 * Tears the node in `layout` down. Resolves with what could not be undone (empty when all went well);
 * the node's logs stay in `logs/`, everything else in its directory is removed.
 */
export async function teardownNode(layout: NodeLayout): Promise<string[]> {
  const state = await readNodeState(layout);
  if (!state) return [];
  const problems: string[] = [];
  const attempt = async (what: string, step: () => Promise<unknown>): Promise<void> => {
    await step().catch((err: unknown) => problems.push(`${what}: ${(err as Error).message}`));
  };
  // The kubelet first, so it does not restart what is being removed; containerd last of them.
  for (const name of [...nodeProcessNames].reverse()) {
    await attempt(`stop ${name}`, () => stopNodeProcess(layout, name, commandOf(state, name)));
  }
  await attempt('remove containers', () => removeContainers(layout, state));
  await attempt('stop shims', () => stopShims(layout));
  await attempt('unmount', () => unmountUnder([layout.dir, shimSocketDir]));
  for (const link of [state.network.bridge, state.network.serviceLink]) {
    await attempt(`delete ${link}`, () =>
      runCommand('ip', ['link', 'delete', link]).catch((err: Error) => {
        if (!/Cannot find device|does not exist/u.test(err.message)) throw err;
      }),
    );
  }
  problems.push(...(await restoreHost(state.host, layout)));
  const keep = new Set([basename(layout.logsDir)]);
  for (const entry of await readdir(layout.dir).catch(() => [])) {
    if (!keep.has(entry))
      await attempt(`remove ${entry}`, () => rm(join(layout.dir, entry), { recursive: true, force: true }));
  }
  return problems;
}

/**
 * Tears down the real node of the control plane in `controlPlaneDir`, if there is one (running or left
 * behind by a crash); a no-op otherwise. Resolves with what could not be undone.
 */
export function stopRealNode(controlPlaneDir: string): Promise<string[]> {
  return teardownNode(nodeLayout(controlPlaneDir));
}

function commandOf(state: NodeState, name: NodeProcessName): string {
  return state.processes[name]?.command ?? name;
}

/**
 * Kills and deletes every container runc knows in the node's runc root (one directory per
 * containerd namespace): a shim that loses containerd keeps its containers running.
 */
async function removeContainers(layout: NodeLayout, state: NodeState): Promise<void> {
  for (const namespace of await readdir(layout.runcRoot).catch(() => [])) {
    const root = join(layout.runcRoot, namespace);
    for (const id of await readdir(root).catch(() => [])) {
      await runCommand(state.runc, ['--root', root, 'delete', '--force', id]).catch(() => undefined);
    }
  }
}

/** Stops the containerd shims that served this node's containerd (named by its socket). */
async function stopShims(layout: NodeLayout): Promise<void> {
  const shims: number[] = [];
  for (const entry of await readdir('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid <= 1) continue;
    const args = (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split('\0');
    if (basename(args[0] ?? '') === 'containerd-shim-runc-v2' && args.includes(layout.containerdSocket)) {
      shims.push(pid);
    }
  }
  // Each shim leads its own process group (it calls setsid).
  await Promise.all(shims.map((pid) => stopProcessGroup(pid, 2000)));
}

/** Unmounts every mount at or below one of `dirs`, deepest first. */
export async function unmountUnder(dirs: readonly string[]): Promise<void> {
  const mountInfo = await readFile('/proc/self/mountinfo', 'utf8');
  const points = mountInfo
    .split('\n')
    .map((line) => line.split(' ')[4])
    .filter((point): point is string => point !== undefined)
    // mountinfo escapes spaces and other special characters as octal.
    .map((point) =>
      point.replace(/\\([0-7]{3})/gu, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8))),
    )
    .filter((point) => dirs.some((dir) => point === dir || point.startsWith(`${dir}/`)));
  const unique = [...new Set(points)].sort((a, b) => b.length - a.length);
  for (const point of unique) {
    // A point mounted twice (the kubelet bind-mounts its root onto itself) needs one call per layer.
    for (let layer = 0; layer < 8; layer++) {
      const unmounted = await runCommand('umount', [point]).then(
        () => true,
        () => false,
      );
      if (!unmounted) break;
    }
  }
  const left = (await readFile('/proc/self/mountinfo', 'utf8'))
    .split('\n')
    .map((line) => line.split(' ')[4] ?? '')
    .filter((point) => dirs.some((dir) => point === dir || point.startsWith(`${dir}/`)));
  for (const point of left) await runCommand('umount', ['--lazy', point]).catch(() => undefined);
}
