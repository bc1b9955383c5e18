// A loopback API server for the KubeApi tests: each test installs a handler; requests are recorded.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { afterEach, beforeEach } from 'vitest';
import { ManualClock } from '../src/testing/manual-clock.ts';

export interface RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  body: string;
  /** Client port of the connection the request came on: equal ports mean a reused connection. */
  remotePort: number | undefined;
}

export type Handler = (request: RecordedRequest, res: ServerResponse, req: IncomingMessage) => void;

export interface LoopbackServer {
  readonly kubeConfig: KubeConfig;
  readonly requests: RecordedRequest[];
  handle(handler: Handler): void;
  close(): Promise<void>;
}

export async function startLoopbackServer(): Promise<LoopbackServer> {
  const requests: RecordedRequest[] = [];
  let handler: Handler = (_request, res) => sendJson(res, 404, status(404, 'NotFound', 'no handler'));
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      const recorded: RecordedRequest = {
        method: req.method ?? '',
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        remotePort: req.socket.remotePort,
      };
      requests.push(recorded);
      handler(recorded, res, req);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'loopback', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: 'tester', token: 'secret-token' }],
    contexts: [{ name: 'loopback', cluster: 'loopback', user: 'tester' }],
    currentContext: 'loopback',
  });
  return {
    kubeConfig,
    requests,
    handle: (next) => {
      handler = next;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export function sendJson(
  res: ServerResponse,
  code: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(code, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

export function status(code: number, reason: string, message: string): Record<string, unknown> {
  return { kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message };
}

/** A loopback server and a manual clock, fresh for each test of the calling file. */
export interface LoopbackApiContext {
  readonly server: LoopbackServer;
  readonly clock: ManualClock;
}

/** Starts a loopback server and a manual clock before each test and closes the server after it. */
export function useLoopbackApi(): LoopbackApiContext {
  let server: LoopbackServer | undefined;
  let clock: ManualClock | undefined;
  beforeEach(async () => {
    server = await startLoopbackServer();
    clock = new ManualClock(1_000_000);
  });
  afterEach(async () => {
    await server?.close();
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('useLoopbackApi: used outside a test');
    return value;
  };
  return {
    get server() {
      return started(server);
    },
    get clock() {
      return started(clock);
    },
  };
}
