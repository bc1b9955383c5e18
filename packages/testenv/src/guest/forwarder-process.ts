/**
 * Starts a {@link ./forwarder.ts} process, optionally inside another network namespace, and sends
 * it requests. It runs in its own process group (recorded for the caller's reaper) and exits when
 * this process closes its standard input, i.e. on {@link ForwarderProcess.stop} or when this process
 * dies.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { stopProcessGroup } from '../process-group.ts';
import type { ForwarderEndpoint, ForwarderRequest } from './forwarder.ts';

/** A request before it is numbered (`Omit` applied to each member of the union). */
type WithoutId<T> = T extends unknown ? Omit<T, 'id'> : never;

/** A running forwarder. */
export interface ForwarderProcess {
  readonly pid: number;
  /** Listens on `listen` and forwards each connection to `connect`. */
  listen(listen: ForwarderEndpoint, connect: ForwarderEndpoint): Promise<void>;
  /** Sends new connections of `listen` to `connect`; open ones stay where they are. */
  retarget(listen: ForwarderEndpoint, connect: ForwarderEndpoint): Promise<void>;
  /** Stops listening on `listen` and cuts its open connections. */
  close(listen: ForwarderEndpoint): Promise<void>;
  /** Ends it (standard input closed, then its group stopped). */
  stop(): Promise<void>;
}

/** The forwarder's source or compiled file, beside this module in either layout. */
export function forwarderScript(): string {
  const extension = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
  return fileURLToPath(new URL(`./forwarder${extension}`, import.meta.url));
}

/**
 * Spawns a forwarder. `launcher` goes in front of the Node.js invocation: `['unshare', '--net',
 * '--']` makes a new network namespace that the forwarder then holds (root only).
 */
export async function startForwarder(options: {
  readonly launcher?: readonly string[];
  readonly onOutput?: (text: string) => void;
}): Promise<ForwarderProcess> {
  const argv = [...(options.launcher ?? []), process.execPath, forwarderScript()];
  const [file = process.execPath, ...args] = argv;
  const child: ChildProcessWithoutNullStreams = spawn(file, args, {
    detached: true,
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH ?? '' },
  });
  const pid = await new Promise<number>((resolve, reject) => {
    child.once('error', reject);
    child.once('spawn', () => resolve(child.pid ?? 0));
  });
  child.stderr.on('data', (chunk: Buffer) => options.onOutput?.(chunk.toString()));
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });
  const pending = new Map<number, { resolve: () => void; reject: (err: Error) => void }>();
  let buffered = '';
  child.stdout.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    for (let newline = buffered.indexOf('\n'); newline >= 0; newline = buffered.indexOf('\n')) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      const reply = JSON.parse(line) as { id: number; ok?: true; error?: string };
      const waiter = pending.get(reply.id);
      pending.delete(reply.id);
      if (reply.error === undefined) waiter?.resolve();
      else waiter?.reject(new Error(`forwarder: ${reply.error}`));
    }
  });
  child.once('exit', (code, signal) => {
    for (const waiter of pending.values()) {
      waiter.reject(new Error(`the forwarder exited (${signal ?? code}) before answering`));
    }
    pending.clear();
  });
  // Neither the pipes nor the child keep this process alive, except while an answer is awaited.
  const pipes = [child.stdin, child.stdout, child.stderr] as unknown as Array<{ ref(): void; unref(): void }>;
  const holdOpen = (hold: boolean): void => {
    for (const pipe of pipes) {
      if (hold) pipe.ref();
      else pipe.unref();
    }
  };
  child.unref();
  holdOpen(false);
  let nextId = 1;
  const send = (request: WithoutId<ForwarderRequest>): Promise<void> => {
    if (exited) return Promise.reject(new Error('the forwarder is not running'));
    const id = nextId++;
    holdOpen(true);
    return new Promise<void>((resolve, reject) => {
      pending.set(id, { resolve, reject });
      child.stdin.write(`${JSON.stringify({ ...request, id })}\n`);
    }).finally(() => {
      if (pending.size === 0) holdOpen(false);
    });
  };
  return {
    pid,
    listen: (listen, connect) => send({ op: 'listen', listen, connect }),
    retarget: (listen, connect) => send({ op: 'retarget', listen, connect }),
    close: (listen) => send({ op: 'close', listen }),
    async stop() {
      child.stdin.end();
      await stopProcessGroup(pid, 5_000);
    },
  };
}
