/**
 * Programs inside the guest, started through its agent (see {@link ./guest-agent.ts}) over the
 * unix socket that reaches it. A started program is a {@link RunningProgram}, like a provisioner run
 * on the host, so the same test helpers wait for its output and stop it.
 */
import { request } from 'node:http';
import type { RunningProgram } from '../program-process.ts';
import { stopWaiting, waitFor } from '../wait-for.ts';
import type { SpawnEvent, SpawnRequest } from './guest-agent.ts';

/** Options of a program run in the guest. */
export interface GuestProgramOptions {
  /** The whole environment besides `PATH` (the image's unless given). */
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd?: string;
  /** Run as this user and group instead of root. */
  readonly user?: { readonly uid: number; readonly gid: number };
  /** Written to standard input, which is then closed. */
  readonly stdin?: string;
  /** Called with every chunk of standard output and error. */
  readonly onOutput?: (text: string) => void;
}

/** A program started in the guest. */
export interface GuestProgram extends RunningProgram {
  /** Standard output so far. */
  stdout(): string;
  /** Standard error so far. */
  stderr(): string;
  /** Sends a signal to the program's process group. */
  signal(signal: NodeJS.Signals): Promise<void>;
  /** The signal that ended it, once it has exited; `null` for an exit code. */
  exitSignal(): string | null;
}

/** What a program run to completion did. */
export interface GuestRunResult {
  /** Exit code; `null` when a signal ended it. */
  readonly status: number | null;
  readonly signal: string | null;
  readonly stdout: string;
  readonly stderr: string;
}

const maxOutputChars = 4 << 20;

/**
 * How long `stop()` waits after SIGTERM before SIGKILL. Generous: the guest is a process of the host
 * and a loaded host starves it for seconds at a time, while what a stop checks is that the program
 * exits on SIGTERM at all, not how fast.
 */
const stopGraceMs = 60_000;

/** Sends a JSON request to the agent and resolves with the response's status and body. */
export function agentRequest(
  socketPath: string,
  method: 'GET' | 'POST',
  path: string,
  payload?: unknown,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, method, path, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString() }),
      );
      response.on('error', reject);
    });
    req.on('error', reject);
    req.end(payload === undefined ? undefined : JSON.stringify(payload));
  });
}

async function postOk(socketPath: string, path: string, payload: unknown): Promise<void> {
  const { status, body } = await agentRequest(socketPath, 'POST', path, payload);
  if (status >= 300) throw new Error(`guest agent ${path} answered ${status}: ${body}`);
}

/** Starts `argv` in the guest; resolves once it runs (rejects when it cannot start). */
export function spawnInGuest(
  socketPath: string,
  argv: readonly string[],
  options: GuestProgramOptions = {},
): Promise<GuestProgram> {
  const spec: SpawnRequest = {
    argv,
    ...(options.env === undefined ? {} : { env: options.env }),
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    ...(options.user === undefined ? {} : { uid: options.user.uid, gid: options.user.gid }),
    ...(options.stdin === undefined ? {} : { stdin: options.stdin }),
  };
  let output = '';
  let stdout = '';
  let stderr = '';
  let exitCode: number | null | undefined;
  let exitSignal: string | null = null;
  let settleExit: (code: number | null) => void = () => {};
  const exited = new Promise<number | null>((resolve) => {
    settleExit = (code) => {
      exitCode = code;
      resolve(code);
    };
  });
  const record = (text: string, stream: 'stdout' | 'stderr'): void => {
    output = (output + text).slice(-maxOutputChars);
    if (stream === 'stdout') stdout = (stdout + text).slice(-maxOutputChars);
    else stderr = (stderr + text).slice(-maxOutputChars);
    options.onOutput?.(text);
  };
  const name = argv.join(' ');

  return new Promise<GuestProgram>((resolve, reject) => {
    let started = false;
    const fail = (err: Error): void => {
      if (started) {
        record(`\n[guest agent connection lost: ${err.message}]\n`, 'stderr');
        settleExit(null);
      } else reject(err);
    };
    const onEvent = (event: SpawnEvent): void => {
      if ('pid' in event) {
        started = true;
        resolve(program(event.pid));
      } else if ('stdout' in event) record(event.stdout, 'stdout');
      else if ('stderr' in event) record(event.stderr, 'stderr');
      else if ('exit' in event) {
        exitSignal = event.signal;
        settleExit(event.exit);
      } else fail(new Error(`cannot run ${name} in the guest: ${event.error}`));
    };
    const req = request({ socketPath, method: 'POST', path: '/spawn', agent: false }, (response) => {
      let buffered = '';
      response.on('data', (chunk: Buffer) => {
        buffered += chunk.toString();
        for (let newline = buffered.indexOf('\n'); newline >= 0; newline = buffered.indexOf('\n')) {
          onEvent(JSON.parse(buffered.slice(0, newline)) as SpawnEvent);
          buffered = buffered.slice(newline + 1);
        }
      });
      response.on('end', () => {
        if (exitCode === undefined) fail(new Error('the response ended without an exit status'));
      });
      response.on('error', fail);
    });
    req.on('error', fail);
    req.end(JSON.stringify(spec));
  });

  function program(pid: number): GuestProgram {
    const signal = (sig: NodeJS.Signals) => postOk(socketPath, '/signal', { pid, signal: sig });
    return {
      pid,
      output: () => output,
      stdout: () => stdout,
      stderr: () => stderr,
      exited,
      signal,
      exitSignal: () => exitSignal,
      waitForOutput: (pattern, timeoutMs = 60_000) =>
        waitFor(
          () => {
            if (pattern.test(output)) return output;
            if (exitCode !== undefined) {
              throw stopWaiting(
                new Error(`${name} exited with ${exitCode} before printing ${pattern}:\n${output}`),
              );
            }
            return undefined;
          },
          { timeoutMs, intervalMs: 100, description: `output of ${name} matching ${pattern}` },
        ),
      async stop(graceMs = stopGraceMs) {
        if (exitCode !== undefined) return exitCode;
        await signal('SIGTERM');
        const timer = setTimeout(() => {
          record(`\n[testenv: still running ${graceMs} ms after SIGTERM; sending SIGKILL]\n`, 'stderr');
          void signal('SIGKILL').catch(() => {});
        }, graceMs);
        try {
          return await exited;
        } finally {
          clearTimeout(timer);
        }
      },
    };
  }
}

/** Runs `argv` in the guest to completion; killed after `timeoutMs` (default 60 s). */
export async function runInGuest(
  socketPath: string,
  argv: readonly string[],
  options: GuestProgramOptions & { readonly timeoutMs?: number } = {},
): Promise<GuestRunResult> {
  const program = await spawnInGuest(socketPath, argv, options);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    void program.signal('SIGKILL').catch(() => {});
  }, options.timeoutMs ?? 60_000);
  try {
    await program.exited;
  } finally {
    clearTimeout(timer);
  }
  const stderr = timedOut
    ? `${program.stderr()}\n[killed after ${options.timeoutMs ?? 60_000}ms]`
    : program.stderr();
  return { status: await program.exited, signal: program.exitSignal(), stdout: program.stdout(), stderr };
}
