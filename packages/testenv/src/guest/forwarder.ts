/**
 * A byte forwarder process between TCP and unix sockets, the bridges across network namespaces:
 * a unix socket is a file, reachable from every namespace, so a forwarder in the host's namespace
 * and one in the guest's private namespace meet at one. Controlled over standard input with one JSON
 * object per line, answered on standard output; it exits when standard input closes, so it never
 * outlives the process that started it. Self-contained (Node.js built-ins only): it is run as a
 * program, possibly inside another namespace.
 *
 * Requests: `{"id":1,"op":"listen","listen":E,"connect":E}` (E: `{"path":…}` or
 * `{"host":…,"port":…}`), `{"id":2,"op":"retarget","listen":E,"connect":E}` (new connections go to
 * the new target), `{"id":3,"op":"close","listen":E}` (stops listening and cuts its connections).
 * Replies: `{"id":1,"ok":true}` or `{"id":1,"error":"…"}`.
 */
import { unlinkSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { createInterface } from 'node:readline';

/** A unix socket path or a TCP address. */
export type ForwarderEndpoint = { readonly path: string } | { readonly host: string; readonly port: number };

/** One control request. */
export type ForwarderRequest =
  | {
      readonly id: number;
      readonly op: 'listen' | 'retarget';
      readonly listen: ForwarderEndpoint;
      readonly connect: ForwarderEndpoint;
    }
  | { readonly id: number; readonly op: 'close'; readonly listen: ForwarderEndpoint };

/** The name of an endpoint, the key of its listener. */
export function endpointName(endpoint: ForwarderEndpoint): string {
  return 'path' in endpoint ? `unix:${endpoint.path}` : `tcp:${endpoint.host}:${endpoint.port}`;
}

interface Listener {
  readonly server: Server;
  target: ForwarderEndpoint;
  readonly sockets: Set<Socket>;
}

const listeners = new Map<string, Listener>();

function dial(target: ForwarderEndpoint): Socket {
  return 'path' in target ? connect(target.path) : connect(target.port, target.host);
}

function pipeBoth(client: Socket, listener: Listener): void {
  const upstream = dial(listener.target);
  listener.sockets.add(client);
  listener.sockets.add(upstream);
  // Half-closes pass through: NFS and HTTP clients may shut down their sending side first.
  client.pipe(upstream);
  upstream.pipe(client);
  const drop = (): void => {
    client.destroy();
    upstream.destroy();
    listener.sockets.delete(client);
    listener.sockets.delete(upstream);
  };
  client.on('error', drop);
  upstream.on('error', drop);
  client.on('close', drop);
  upstream.on('close', drop);
}

async function listen(listenAt: ForwarderEndpoint, target: ForwarderEndpoint): Promise<void> {
  const name = endpointName(listenAt);
  if (listeners.has(name)) throw new Error(`already listening on ${name}`);
  const listener: Listener = { server: createServer(), target, sockets: new Set() };
  listener.server.on('connection', (client: Socket) => pipeBoth(client, listener));
  if ('path' in listenAt) {
    try {
      unlinkSync(listenAt.path);
    } catch {
      // Nothing left by an earlier run.
    }
  }
  await new Promise<void>((resolve, reject) => {
    listener.server.once('error', reject);
    const done = (): void => {
      listener.server.off('error', reject);
      resolve();
    };
    if ('path' in listenAt) listener.server.listen(listenAt.path, done);
    else listener.server.listen(listenAt.port, listenAt.host, done);
  });
  listeners.set(name, listener);
}

async function close(listenAt: ForwarderEndpoint): Promise<void> {
  const name = endpointName(listenAt);
  const listener = listeners.get(name);
  if (listener === undefined) return;
  listeners.delete(name);
  for (const socket of listener.sockets) socket.destroy();
  await new Promise<void>((resolve) => listener.server.close(() => resolve()));
}

async function handle(request: ForwarderRequest): Promise<void> {
  switch (request.op) {
    case 'listen':
      return listen(request.listen, request.connect);
    case 'retarget': {
      const listener = listeners.get(endpointName(request.listen));
      if (listener === undefined) throw new Error(`not listening on ${endpointName(request.listen)}`);
      listener.target = request.connect;
      return;
    }
    case 'close':
      return close(request.listen);
  }
}

function main(): void {
  const reply = (value: object): void => {
    process.stdout.write(`${JSON.stringify(value)}\n`);
  };
  const lines = createInterface({ input: process.stdin });
  lines.on('line', (line) => {
    if (line.trim() === '') return;
    let request: ForwarderRequest;
    try {
      request = JSON.parse(line) as ForwarderRequest;
    } catch {
      reply({ id: -1, error: `not JSON: ${line}` });
      return;
    }
    handle(request).then(
      () => reply({ id: request.id, ok: true }),
      (err: unknown) => reply({ id: request.id, error: err instanceof Error ? err.message : String(err) }),
    );
  });
  // The owner is gone: nothing may outlive it.
  lines.on('close', () => process.exit(0));
}

if (import.meta.main) main();
