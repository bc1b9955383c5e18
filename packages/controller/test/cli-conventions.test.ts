// The Kubernetes-world conventions of every provisioner CLI, proved on a program run as a child
// process: --version, klog flags, switches, the start line, and errors with their cause chain.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import { eventually } from '../src/testing/index.ts';

const program = join(import.meta.dirname, 'fixtures/cli-program.ts');

interface Run {
  readonly child: ChildProcess;
  readonly stdout: () => string;
  /** Parsed JSON log lines written so far. */
  readonly logs: () => Record<string, unknown>[];
  readonly exit: Promise<number | null>;
}

function start(args: string[]): Run {
  const child = spawn(process.execPath, ['--conditions=@kube-provisioner/source', program, ...args], {
    env: { PATH: process.env.PATH ?? '' },
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    err += chunk.toString();
  });
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const logs = () =>
    err
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { child, stdout: () => out, logs, exit };
}

/** A kubeconfig for `server`, removed when the calling test finishes. */
function kubeconfigFor(server: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'kp-cli-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'kubeconfig');
  writeFileSync(
    file,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'c', cluster: { server, 'insecure-skip-tls-verify': true } }],
      users: [{ name: 'u', user: { token: 'x' } }],
      contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
      'current-context': 'c',
    }),
  );
  return file;
}

// An API server that forbids everything, as one with RBAC missing would.
const forbidding = createServer((_request, response) => {
  response.writeHead(403, { 'content-type': 'application/json' });
  response.end(
    JSON.stringify({
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      reason: 'Forbidden',
      code: 403,
      message: 'no',
    }),
  );
});
await new Promise<void>((resolve) => forbidding.listen(0, '127.0.0.1', resolve));
afterAll(() => new Promise((resolve) => forbidding.close(resolve)));

/** Waits for the first log line whose `err` matches `pattern`. */
function loggedError(
  run: Run,
  pattern: RegExp,
  timeoutMs = 30_000,
): Promise<Record<string, unknown> | undefined> {
  return eventually(
    () => {
      const line = run.logs().find((entry) => pattern.test(JSON.stringify(entry.err ?? '')));
      expect(line).toBeDefined();
      return line;
    },
    { timeoutMs, intervalMs: 50 },
  );
}

describe('provisioner CLI conventions', () => {
  it('prints name and version for --version and exits 0, before any required setting is checked', async () => {
    const run = start(['--version', '--threadiness=not-a-number']);
    expect(await run.exit).toBe(0);
    expect(run.stdout()).toBe('fixture-provisioner 9.8.7\n');
  });

  it('takes klog flags and switches, logs version, Node and options at start, and API errors with their status', async () => {
    const { port } = forbidding.address() as AddressInfo;
    const run = start([
      '-v=4',
      '-logtostderr',
      '-alsologtostderr=true',
      '-stderrthreshold',
      'INFO',
      '--no-leader-election',
      `--kubeconfig=${kubeconfigFor(`http://127.0.0.1:${port}`)}`,
    ]);
    try {
      // The informers' first list is refused: logged with the status code and reason.
      const failure = await loggedError(run, /Forbidden/u);
      expect(failure?.err).toMatchObject({ type: 'ApiError', statusCode: 403, reason: 'Forbidden' });
      const logs = run.logs();
      expect(logs.filter((entry) => entry.level === 'warn').map((entry) => entry.msg)).toEqual(
        expect.arrayContaining([
          'ignoring klog flag -logtostderr: logs are always JSON lines on stderr',
          'ignoring klog flag -alsologtostderr: logs are always JSON lines on stderr',
          'ignoring klog flag -stderrthreshold: logs are always JSON lines on stderr; use -v for verbosity',
        ]),
      );
      const startLine = logs.find((entry) => entry.msg === 'starting fixture-provisioner');
      expect(startLine).toMatchObject({
        level: 'info',
        version: '9.8.7',
        node: process.version,
        options: { verbosity: 4, leaderElection: false, threadiness: 4, pvSaveStrategy: 'queue' },
      });
    } finally {
      run.child.kill('SIGTERM');
    }
    expect(await run.exit).toBe(0);
  });

  it('logs a refused connection with its socket code, syscall and address, not just "fetch failed"', async () => {
    // Nothing listens on port 1: the client retries the refused connection, then the informers
    // report it, once per resource, after their first attempt gives up.
    const run = start(['--no-leader-election', `--kubeconfig=${kubeconfigFor('https://127.0.0.1:1')}`]);
    try {
      const failure = await loggedError(run, /ECONNREFUSED/u, 60_000);
      expect(failure?.err).toMatchObject({
        type: 'Error',
        code: 'ECONNREFUSED',
        syscall: 'connect',
        address: '127.0.0.1',
        port: 1,
      });
    } finally {
      run.child.kill('SIGTERM');
    }
    expect(await run.exit).toBe(0);
  }, 90_000);

  it('exits 2 naming the switch when it is given a value that is not a boolean', async () => {
    const run = start(['--leader-election=maybe']);
    expect(await run.exit).toBe(2);
  });
});
