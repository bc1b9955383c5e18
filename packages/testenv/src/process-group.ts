import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';

/**
 * Whether a process with this id runs. A zombie counts as exited: an orphan is reaped only when
 * init gets to it, which some container inits do only every few seconds.
 */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    // EPERM: it exists but belongs to someone else.
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    // The state follows the parenthesised command name, which may itself contain spaces.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** The command line of a running process, or `undefined` when it is gone (Linux `/proc`). */
export async function processCommandLine(pid: number): Promise<string[] | undefined> {
  try {
    const raw = await readFile(`/proc/${pid}/cmdline`, 'utf8');
    return raw.split('\0').filter((part) => part.length > 0);
  } catch {
    return undefined;
  }
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

/**
 * Stops a process group whose leader is the process of interest: SIGTERM, then SIGKILL once
 * `graceMs` has passed. Resolves when the leader has exited; a final SIGKILL takes any member the
 * leader left behind.
 */
export async function stopProcessGroup(pgid: number, graceMs = 10_000): Promise<void> {
  signalGroup(pgid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  let killed = false;
  while (isProcessAlive(pgid)) {
    if (!killed && Date.now() >= deadline) {
      signalGroup(pgid, 'SIGKILL');
      killed = true;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  signalGroup(pgid, 'SIGKILL');
}
