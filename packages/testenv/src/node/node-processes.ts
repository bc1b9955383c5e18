/**
 * The long-running processes of a real node, each in its own process group with a pid file and a log
 * in the node's state directory, like the control plane's components (component-process.ts).
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { isProcessAlive, processCommandLine, stopProcessGroup } from '../process-group.ts';
import type { NodeLayout } from './node-layout.ts';

/** The node's processes, in start order. */
export type NodeProcessName = 'containerd' | 'service-proxy' | 'kube-controller-manager' | 'kubelet';

/** Start order; stop in reverse. */
export const nodeProcessNames: readonly NodeProcessName[] = [
  'containerd',
  'service-proxy',
  'kube-controller-manager',
  'kubelet',
];

/** How a node process runs. */
export interface NodeProcessSpec {
  readonly command: string;
  readonly args: readonly string[];
  /** Added to the environment of the caller. */
  readonly env?: Readonly<Record<string, string>>;
}

/** The log of a node process. */
export function nodeLogFile(layout: NodeLayout, name: NodeProcessName): string {
  return join(layout.logsDir, `${name}.log`);
}

const pidFile = (layout: NodeLayout, name: NodeProcessName): string => join(layout.pidsDir, `${name}.pid`);

/** Starts a node process in its own process group, appending its output to its log, and records its pid. */
export async function launchNodeProcess(
  layout: NodeLayout,
  name: NodeProcessName,
  spec: NodeProcessSpec,
): Promise<number> {
  await mkdir(layout.logsDir, { recursive: true });
  await mkdir(layout.pidsDir, { recursive: true });
  const log = openSync(nodeLogFile(layout, name), 'a');
  try {
    const child = spawn(spec.command, spec.args, {
      detached: true,
      stdio: ['ignore', log, log],
      env: { ...process.env, ...spec.env },
    });
    const pid = await new Promise<number>((resolve, reject) => {
      child.once('error', reject);
      child.once('spawn', () => resolve(child.pid ?? 0));
    });
    child.unref();
    await writeFile(pidFile(layout, name), `${pid}\n`);
    return pid;
  } finally {
    closeSync(log);
  }
}

/** The recorded pid of a node process if that process still runs `command` (pids get recycled). */
export async function runningNodeProcess(
  layout: NodeLayout,
  name: NodeProcessName,
  command: string,
): Promise<number | undefined> {
  const pid = Number.parseInt(await readFile(pidFile(layout, name), 'utf8').catch(() => ''), 10);
  if (!Number.isInteger(pid) || pid <= 1 || !isProcessAlive(pid)) return undefined;
  const commandLine = await processCommandLine(pid);
  return commandLine?.[0] !== undefined && basename(commandLine[0]) === basename(command) ? pid : undefined;
}

/** Stops a node process if it runs (SIGTERM, SIGKILL after `graceMs`) and forgets its pid. */
export async function stopNodeProcess(
  layout: NodeLayout,
  name: NodeProcessName,
  command: string,
  graceMs = 10_000,
): Promise<void> {
  const pid = await runningNodeProcess(layout, name, command);
  if (pid !== undefined) await stopProcessGroup(pid, graceMs);
  await rm(pidFile(layout, name), { force: true });
}

/** The last `lines` lines of a node process's log, or `''` without one. */
export async function nodeLogTail(layout: NodeLayout, name: NodeProcessName, lines = 30): Promise<string> {
  const text = await readFile(nodeLogFile(layout, name), 'utf8').catch(() => '');
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}
