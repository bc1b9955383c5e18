import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '@kube-provisioner/testenv';
import { afterEach, describe, expect, it } from 'vitest';
import { type ReplicaSet, startReplicaSet } from '../src/replica-set.ts';

// A stand-in provisioner: leads at once under a fresh identity, logs one side effect, then idles.
const script = `
const id = 'host_' + process.pid;
const log = (msg, fields = {}) => process.stderr.write(JSON.stringify({ level: 'info', time: Date.now(), ...fields, msg }) + '\\n');
log('Starting provisioner controller', { component: id });
log('Started provisioner controller', { component: id });
log('volume directory ready', { path: 'a' });
log('not a work line');
process.stdout.write('plain text\\n');
setInterval(() => {}, 1000);
`;

let replicas: ReplicaSet | undefined;
let logDir = '';

afterEach(async () => {
  await replicas?.stop();
  await rm(logDir, { recursive: true, force: true });
});

describe('startReplicaSet', () => {
  it('parses identities, starts and work lines, restarts a killed replica, and keeps full logs', async () => {
    logDir = await mkdtemp(join(tmpdir(), 'replicas-'));
    replicas = await startReplicaSet({
      name: 'fake',
      command: { command: process.execPath, args: ['-e', script] },
      args: [],
      env: {},
      replicas: 2,
      logDir,
      restartDelayMs: 10,
    });
    const set = replicas;
    await waitFor(() => set.workLines().length === 2, { timeoutMs: 20_000, description: 'two work lines' });
    const [first] = set.incarnations;
    const identity = first?.identity ?? '';
    expect(identity).toMatch(/^host_\d+$/u);
    expect(set.byIdentity(identity)).toBe(first);
    const killedAt = Date.now();
    process.kill(-(first?.program.pid ?? 0), 'SIGKILL');

    await waitFor(() => set.startsAfter(killedAt).length > 0, {
      timeoutMs: 20_000,
      description: 'a restart',
    });

    expect(set.incarnations.map(({ replica, number }) => [replica, number])).toEqual([
      [0, 0],
      [1, 0],
      [0, 1],
    ]);
    expect(first?.exitCode).toBeNull();
    expect(set.byIdentity(identity)).toBeUndefined();
    expect(set.workLines().map(({ msg }) => msg)).toEqual(Array(3).fill('volume directory ready'));
    await set.stop();
    expect(await readFile(join(logDir, 'fake-0-0.log'), 'utf8')).toMatch(/plain text/u);
  });
});

// Logs a side effect every 20 ms.
const busyScript = `
const id = 'host_' + process.pid;
const log = (msg, fields = {}) => process.stderr.write(JSON.stringify({ level: 'info', time: Date.now(), ...fields, msg }) + '\\n');
log('Starting provisioner controller', { component: id });
log('Started provisioner controller', { component: id });
setInterval(() => log('volume directory ready', { path: 'a' }), 20);
`;

describe('a replica resumed from SIGSTOP', () => {
  it('sets aside only its first work line stamped after the resume, and judges the rest', async () => {
    logDir = await mkdtemp(join(tmpdir(), 'replicas-'));
    replicas = await startReplicaSet({
      name: 'busy',
      command: { command: process.execPath, args: ['-e', busyScript] },
      args: [],
      env: {},
      replicas: 1,
      logDir,
    });
    const set = replicas;
    await waitFor(() => set.workLines().length >= 2, { timeoutMs: 20_000, description: 'work lines' });
    const [incarnation] = set.incarnations;
    const pid = incarnation?.program.pid ?? 0;
    process.kill(-pid, 'SIGSTOP');
    const stoppedAt = Date.now();
    // Resumed in a later millisecond, so that no line stamped before the stop counts as after it.
    await waitFor(() => Date.now() > stoppedAt, { timeoutMs: 1_000, description: 'the clock to move on' });
    const resumedAt = Date.now();
    incarnation?.resumed(resumedAt);
    process.kill(-pid, 'SIGCONT');

    const after = () => set.workLines().filter((line) => line.atMs >= resumedAt);
    await waitFor(() => after().length >= 3, { timeoutMs: 20_000, description: 'lines after the resume' });

    const [setAside, ...more] = set.resumeLines();
    expect(more).toEqual([]);
    expect(setAside?.atMs).toBeGreaterThanOrEqual(resumedAt);
    expect(after().every((line) => line.atMs >= (setAside?.atMs ?? Number.POSITIVE_INFINITY))).toBe(true);
  });
});
