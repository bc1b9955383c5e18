import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { isProcessAlive, processCommandLine, stopProcessGroup } from './process-group.ts';
import {
  type ComponentName,
  type ComponentSpec,
  logFile,
  readPid,
  removePid,
  type StateLayout,
  writePid,
} from './state-dir.ts';

/**
 * Starts a component in its own process group, appending its output to `logs/<name>.log`, and
 * records the pid. The process outlives the caller: whoever stops the control plane kills it, or the
 * reaper does when the owner dies.
 */
export async function launchComponent(
  layout: StateLayout,
  name: ComponentName,
  spec: ComponentSpec,
): Promise<number> {
  await mkdir(layout.logsDir, { recursive: true });
  const log = openSync(logFile(layout, name), 'a');
  try {
    const child = spawn(spec.command, spec.args, { detached: true, stdio: ['ignore', log, log] });
    const pid = await new Promise<number>((resolve, reject) => {
      child.once('error', reject);
      child.once('spawn', () => resolve(child.pid ?? 0));
    });
    child.unref();
    await writePid(layout, name, pid);
    return pid;
  } finally {
    closeSync(log);
  }
}

/**
 * The recorded pid of a component if that process is still the component: a pid file left by a
 * crashed run may name a recycled pid, which must not be killed.
 */
export async function runningComponentPid(
  layout: StateLayout,
  name: ComponentName,
  spec: ComponentSpec | undefined,
): Promise<number | undefined> {
  const pid = await readPid(layout, name);
  if (pid === undefined || !isProcessAlive(pid)) return undefined;
  const commandLine = await processCommandLine(pid);
  const expected = basename(spec?.command ?? name);
  return commandLine?.[0] !== undefined && basename(commandLine[0]) === expected ? pid : undefined;
}

/** Stops a component if it runs, and forgets its pid. */
export async function stopComponentProcess(
  layout: StateLayout,
  name: ComponentName,
  spec: ComponentSpec | undefined,
): Promise<void> {
  const pid = await runningComponentPid(layout, name, spec);
  if (pid !== undefined) await stopProcessGroup(pid);
  await removePid(layout, name);
}

/** The last `lines` lines of a component's log, or `''` without one. */
export async function logTail(layout: StateLayout, name: ComponentName, lines = 30): Promise<string> {
  const text = await readFile(logFile(layout, name), 'utf8').catch(() => '');
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}
