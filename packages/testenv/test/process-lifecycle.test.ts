import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { launchComponent, runningComponentPid, stopComponentProcess } from '../src/component-process.ts';
import { isProcessAlive, stopProcessGroup } from '../src/process-group.ts';
import { startReaper } from '../src/reaper.ts';
import { type ComponentSpec, logFile, readPid, stateLayout, writePid } from '../src/state-dir.ts';
import { waitFor } from '../src/wait-for.ts';
import { temporaryDir } from './support/temporary-dir.ts';

const gone = (pid: number) =>
  waitFor(() => !isProcessAlive(pid), {
    timeoutMs: 15_000,
    intervalMs: 20,
    description: `pid ${pid} to exit`,
  });

/** A process group of a shell and its child sleep, like a component that forked. */
function detachedGroup(script = 'sleep 300 & wait'): number {
  const child = spawn('sh', ['-c', script], { detached: true, stdio: 'ignore' });
  child.unref();
  if (!child.pid) throw new Error('spawn failed');
  return child.pid;
}

/**
 * A detached group whose `script` prints `ready` once set up (traps installed); resolves after that
 * line, with the signal that ends the shell.
 */
async function readyGroup(script: string): Promise<{ pgid: number; exit: Promise<NodeJS.Signals | null> }> {
  const child = spawn('sh', ['-c', script], { detached: true, stdio: ['ignore', 'pipe', 'ignore'] });
  if (!child.pid) throw new Error('spawn failed');
  const exit = new Promise<NodeJS.Signals | null>((resolve) => {
    child.on('exit', (_code, signal) => resolve(signal));
  });
  for await (const line of createInterface({ input: child.stdout })) {
    if (line === 'ready') return { pgid: child.pid, exit };
  }
  throw new Error(`the script ended without printing "ready": ${script}`);
}

describe('process groups', () => {
  it('stops a process group with SIGTERM', async () => {
    const pgid = detachedGroup();
    await stopProcessGroup(pgid);
    expect(isProcessAlive(pgid)).toBe(false);
  });

  it('kills a group that ignores SIGTERM once the grace period is over', async () => {
    const { pgid, exit } = await readyGroup("trap '' TERM; echo ready; sleep 300 & wait; sleep 300");
    await stopProcessGroup(pgid, 200);
    expect(isProcessAlive(pgid)).toBe(false);
    await expect(exit).resolves.toBe('SIGKILL');
  });
});

describe('component processes', () => {
  const spec: ComponentSpec = { command: 'sh', args: ['-c', 'echo started; exec sleep 300'], healthUrl: '' };

  it('run detached with a pid file and a log, and stop by pid file', async () => {
    const layout = stateLayout(await temporaryDir('testenv-state-'));
    const pid = await launchComponent(layout, 'etcd', spec);
    expect(await readPid(layout, 'etcd')).toBe(pid);
    await waitFor(async () => (await readFile(logFile(layout, 'etcd'), 'utf8')).includes('started'), {
      timeoutMs: 5000,
      description: 'log line',
    });
    // `exec sleep` replaces the shell, so the running command no longer matches `sh`.
    await expect(runningComponentPid(layout, 'etcd', { ...spec, command: '/bin/sleep' })).resolves.toBe(pid);
    await stopComponentProcess(layout, 'etcd', { ...spec, command: '/bin/sleep' });
    await gone(pid);
    expect(await readPid(layout, 'etcd')).toBeUndefined();
  });

  it('never kill a recycled pid that a stale pid file names', async () => {
    const layout = stateLayout(await temporaryDir('testenv-state-'));
    const stranger = detachedGroup();
    try {
      await writePid(layout, 'kube-apiserver', stranger);
      await expect(runningComponentPid(layout, 'kube-apiserver', undefined)).resolves.toBeUndefined();
      await stopComponentProcess(layout, 'kube-apiserver', undefined);
      expect(isProcessAlive(stranger)).toBe(true);
    } finally {
      await stopProcessGroup(stranger);
    }
  });
});

describe('reaper', () => {
  it('stops the recorded groups when released', async () => {
    const layout = stateLayout(await temporaryDir('testenv-state-'));
    const pgid = detachedGroup();
    await writePid(layout, 'etcd', pgid);
    startReaper(layout.pidsDir).release();
    await gone(pgid);
  });

  it('stops the recorded groups when its owner is killed with SIGKILL', async () => {
    const layout = stateLayout(await temporaryDir('testenv-state-'));
    const pgid = detachedGroup();
    await writePid(layout, 'kube-scheduler', pgid);
    const owner = join(layout.dir, 'owner.mjs');
    const reaperModule = new URL('../src/reaper.ts', import.meta.url).href;
    await writeFile(
      owner,
      `import { startReaper } from ${JSON.stringify(reaperModule)};
startReaper(${JSON.stringify(layout.pidsDir)});
process.kill(process.pid, 'SIGKILL');`,
    );
    const exit = await new Promise<NodeJS.Signals | null>((resolve) => {
      spawn(process.execPath, [owner], { stdio: 'inherit' }).on('exit', (_code, signal) => resolve(signal));
    });
    expect(exit).toBe('SIGKILL');
    await gone(pgid);
  });
});
