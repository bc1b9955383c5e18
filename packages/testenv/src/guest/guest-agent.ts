/**
 * The agent inside the guest: a small HTTP server on the guest's address through which the host
 * runs programs there. Self-contained (Node.js built-ins only): the host copies this file into the
 * share directory and the guest's init runs it with the guest's Node.js.
 *
 * - `GET /health`: 200 once it serves.
 * - `POST /spawn` `{argv, env?, cwd?, uid?, gid?, stdin?}`: starts the program in its own process
 *   group and streams newline-delimited JSON: `{"pid":N}`, then `{"stdout":"…"}` / `{"stderr":"…"}`
 *   chunks, then `{"exit":code,"signal":name}` (or `{"error":"…"}` when it could not start). The
 *   program keeps running when the response's connection closes.
 * - `POST /signal` `{pid, signal}`: signals the program's process group.
 * - `POST /forward` `{listen:{host,port}, connect:{host,port}}`: a TCP forwarder inside the guest,
 *   e.g. so that `https://127.0.0.1:<port>` in a kubeconfig reaches the host's API server.
 * - `POST /poweroff`: powers the guest off at once (its disks are throw-away overlays).
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, createServer as createTcpServer, type Socket } from 'node:net';

/** Body of `POST /spawn`. */
export interface SpawnRequest {
  readonly argv: readonly string[];
  /** The whole environment; `PATH` defaults to the image's. */
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd?: string;
  readonly uid?: number;
  readonly gid?: number;
  /** Written to standard input, which is then closed; without it standard input is empty. */
  readonly stdin?: string;
}

/** A line of a `POST /spawn` response. */
export type SpawnEvent =
  | { readonly pid: number }
  | { readonly stdout: string }
  | { readonly stderr: string }
  | { readonly exit: number | null; readonly signal: string | null }
  | { readonly error: string };

const defaultPath = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

async function body<T>(request: IncomingMessage): Promise<T> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString() || '{}') as T;
}

function runSpawn(spec: SpawnRequest, response: ServerResponse): void {
  response.writeHead(200, { 'content-type': 'application/x-ndjson' });
  const send = (event: SpawnEvent): void => {
    if (!response.destroyed) response.write(`${JSON.stringify(event)}\n`);
  };
  const [file, ...args] = spec.argv;
  if (file === undefined) {
    send({ error: 'empty argv' });
    response.end();
    return;
  }
  const child = spawn(file, args, {
    env: { PATH: defaultPath, ...spec.env },
    ...(spec.cwd === undefined ? {} : { cwd: spec.cwd }),
    ...(spec.uid === undefined ? {} : { uid: spec.uid }),
    ...(spec.gid === undefined ? {} : { gid: spec.gid }),
    detached: true,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.once('spawn', () => {
    send({ pid: child.pid ?? 0 });
    child.stdin.on('error', () => {});
    child.stdin.end(spec.stdin ?? '');
  });
  child.stdout.on('data', (chunk: Buffer) => send({ stdout: chunk.toString() }));
  child.stderr.on('data', (chunk: Buffer) => send({ stderr: chunk.toString() }));
  child.once('error', (err) => {
    send({ error: err.message });
    response.end();
  });
  child.once('close', (code, signal) => {
    send({ exit: code, signal });
    response.end();
  });
}

function forward(
  listen: { host: string; port: number },
  target: { host: string; port: number },
): Promise<void> {
  const server = createTcpServer((client: Socket) => {
    const upstream = connect(target.port, target.host);
    client.pipe(upstream);
    upstream.pipe(client);
    const drop = (): void => {
      client.destroy();
      upstream.destroy();
    };
    for (const socket of [client, upstream]) {
      socket.on('error', drop);
      socket.on('close', drop);
    }
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port, listen.host, () => resolve());
  });
}

async function route(request: IncomingMessage, response: ServerResponse): Promise<void> {
  const { method, url } = request;
  if (method === 'GET' && url === '/health') {
    response.end('ok');
  } else if (method === 'POST' && url === '/spawn') {
    runSpawn(await body<SpawnRequest>(request), response);
  } else if (method === 'POST' && url === '/signal') {
    const { pid, signal } = await body<{ pid: number; signal: NodeJS.Signals }>(request);
    try {
      process.kill(-pid, signal);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
    }
    response.writeHead(204).end();
  } else if (method === 'POST' && url === '/forward') {
    const { listen, connect: target } = await body<{
      listen: { host: string; port: number };
      connect: { host: string; port: number };
    }>(request);
    await forward(listen, target);
    response.writeHead(204).end();
  } else if (method === 'POST' && url === '/poweroff') {
    response.writeHead(204).end(() => writeFileSync('/proc/sysrq-trigger', 'o'));
  } else {
    response.writeHead(404).end();
  }
}

function main(): void {
  const port = Number(process.argv[2]);
  const server = createHttpServer((request, response) => {
    route(request, response).catch((err: unknown) => {
      if (!response.headersSent) response.writeHead(500);
      response.end(err instanceof Error ? err.message : String(err));
    });
  });
  // One connection per long-running program: no idle or request time limits.
  server.requestTimeout = 0;
  server.headersTimeout = 0;
  server.keepAliveTimeout = 0;
  server.listen(port, () => console.log(`testenv-guest: agent listening on port ${port}`));
}

if (import.meta.main) main();
