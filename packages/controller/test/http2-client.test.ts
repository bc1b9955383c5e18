// Http2Client against loopback TLS servers: one HTTP/2 session reused, the fallback for a server
// without h2, idle streams and sessions that end mid-answer.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http2, { type Http2SecureServer, type ServerHttp2Session } from 'node:http2';
import https from 'node:https';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLoopbackServingPair } from '@kube-provisioner/testenv/internal';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ExchangeRequest, Send } from '../src/client/exchange.ts';
import { isIdleTimeout } from '../src/client/exchange.ts';
import { Http2Client, type Http2ClientOptions } from '../src/client/http2-client.ts';
import { isTransientNetworkError } from '../src/client/retry.ts';

let pki: { dir: string; key: Buffer; cert: Buffer };
beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'http2-client-'));
  const pair = await createLoopbackServingPair(dir);
  pki = { dir, key: readFileSync(pair.key), cert: readFileSync(pair.cert) };
});
afterAll(() => rmSync(pki.dir, { recursive: true, force: true }));

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function request(path: string, extra: Partial<ExchangeRequest> = {}): ExchangeRequest {
  return { method: 'GET', path, headers: { accept: 'application/json' }, body: null, signal: null, ...extra };
}

const noFallback: Send = () => Promise.reject(new Error('fallback used'));

/** An h2 server; `sessions` holds every session it accepted. */
async function startH2(
  handle: (path: string, stream: http2.ServerHttp2Stream, session: ServerHttp2Session) => void,
): Promise<{ url: URL; sessions: ServerHttp2Session[] }> {
  const server: Http2SecureServer = http2.createSecureServer({ key: pki.key, cert: pki.cert });
  const sessions: ServerHttp2Session[] = [];
  server.on('session', (session) => sessions.push(session));
  server.on('stream', (stream, headers) => {
    // The tests end sessions mid-answer on purpose.
    stream.on('error', () => {});
    handle(String(headers[':path']), stream, stream.session as ServerHttp2Session);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        for (const session of sessions) session.destroy();
        server.close(() => resolve());
      }),
  );
  return { url: new URL(`https://127.0.0.1:${(server.address() as AddressInfo).port}`), sessions };
}

function client(url: URL, fallback: Send = noFallback, options: Http2ClientOptions = {}): Http2Client {
  const http2Client = new Http2Client(url, { ca: pki.cert }, fallback, options);
  cleanups.push(() => http2Client.close());
  return http2Client;
}

/**
 * A TCP relay to `target` whose connections can be frozen: nothing passes either way any more and
 * neither side is told, as when a node or a NAT drops a connection silently.
 */
async function startRelay(target: URL): Promise<{
  url: URL;
  /** Freezes every connection open now; later ones relay normally. */
  freeze(): void;
  /** Resolves when the client closes its side of the first connection. */
  firstClosedByClient: Promise<void>;
}> {
  const pairs: { client: net.Socket; server: net.Socket }[] = [];
  let firstClosed: () => void = () => {};
  const firstClosedByClient = new Promise<void>((resolve) => {
    firstClosed = resolve;
  });
  const relay = net.createServer((clientSide) => {
    const serverSide = net.connect(Number(target.port), target.hostname);
    if (pairs.length === 0) clientSide.once('close', () => firstClosed());
    pairs.push({ client: clientSide, server: serverSide });
    for (const socket of [clientSide, serverSide]) socket.on('error', () => {});
    clientSide.pipe(serverSide);
    serverSide.pipe(clientSide);
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        for (const { client: c, server: s } of pairs) {
          c.destroy();
          s.destroy();
        }
        relay.close(() => resolve());
      }),
  );
  return {
    url: new URL(`https://127.0.0.1:${(relay.address() as AddressInfo).port}`),
    freeze() {
      for (const { client: c, server: s } of pairs) {
        // Read and dropped, so the relay still sees the client close its side.
        c.unpipe(s);
        s.unpipe(c);
        c.resume();
        s.resume();
      }
    },
    firstClosedByClient,
  };
}

describe('Http2Client', () => {
  it('sends every request over one HTTP/2 session, with method, headers and body', async () => {
    const seen: string[] = [];
    const { url, sessions } = await startH2((path, stream) => {
      let body = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => {
        body += chunk;
      });
      stream.on('end', () => {
        seen.push(`${path} ${body}`);
        stream.respond({ ':status': 201, 'content-type': 'application/json', 'x-echo': path });
        stream.end(JSON.stringify({ path }));
      });
    });
    const http2Client = client(url);
    const first = await http2Client.send(request('/a', { method: 'POST', body: '{"n":1}' }));
    expect(first.statusCode).toBe(201);
    expect(first.headers['x-echo']).toBe('/a');
    expect(await first.body.text()).toBe('{"path":"/a"}');
    const second = await http2Client.send(request('/b'));
    const chunks: Uint8Array[] = [];
    for await (const chunk of second.body) chunks.push(chunk);
    expect(Buffer.concat(chunks).toString()).toBe('{"path":"/b"}');
    expect(seen).toEqual(['/a {"n":1}', '/b ']);
    expect(sessions).toHaveLength(1);
  });

  it('hands every request to the fallback when the server does not negotiate h2', async () => {
    const server = https.createServer({ key: pki.key, cert: pki.cert }, (_req, res) => res.end('h1'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const url = new URL(`https://127.0.0.1:${(server.address() as AddressInfo).port}`);
    const fallen: string[] = [];
    const fallback: Send = async (sent) => {
      fallen.push(sent.path);
      return {
        statusCode: 200,
        headers: {},
        body: { text: async () => 'fallback', async *[Symbol.asyncIterator]() {} },
      };
    };
    const http2Client = client(url, fallback);
    expect(await (await http2Client.send(request('/one'))).body.text()).toBe('fallback');
    expect(await (await http2Client.send(request('/two'))).body.text()).toBe('fallback');
    expect(fallen).toEqual(['/one', '/two']);
  });

  it('fails a stream silent for its idle timeout, and sends the next request on a new session', async () => {
    const { url, sessions } = await startH2((path, stream) => {
      if (path === '/silent') return;
      stream.respond({ ':status': 200 });
      stream.end('ok');
    });
    const http2Client = client(url);
    await expect(http2Client.send(request('/silent', { idleTimeoutMs: 50 }))).rejects.toSatisfy(
      isIdleTimeout,
    );
    const next = await http2Client.send(request('/ok'));
    expect(await next.body.text()).toBe('ok');
    expect(sessions).toHaveLength(2);
  });

  it('fails a body cut short by the session ending with an error the retry policy takes for a broken connection', async () => {
    const { url } = await startH2((_path, stream, session) => {
      stream.respond({ ':status': 200 });
      stream.write('{"partial":', () => session.destroy());
    });
    const response = await client(url).send(request('/cut'));
    await expect(response.body.text()).rejects.toSatisfy(isTransientNetworkError);
  });

  it('sends a request the server refused unprocessed again, once, on a new session, whatever the method', async () => {
    let streams = 0;
    const { url, sessions } = await startH2((_path, stream) => {
      streams += 1;
      if (streams === 1) return void stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
      stream.respond({ ':status': 201 });
      stream.end('created');
    });
    const response = await client(url).send(request('/pvs', { method: 'POST', body: '{}' }));
    expect(await response.body.text()).toBe('created');
    expect(streams).toBe(2);
    expect(sessions).toHaveLength(2);
  });

  it('sends the host name for SNI', async () => {
    const names: (string | false)[] = [];
    const { url } = await startH2((_path, stream, session) => {
      names.push((session.socket as unknown as { servername: string | false }).servername);
      stream.respond({ ':status': 200 });
      stream.end();
    });
    const byName = new URL(url);
    byName.hostname = 'localhost';
    await (await client(byName).send(request('/'))).body.text();
    expect(names).toEqual(['localhost']);
  });

  it('closes a session the server is already closing once its stream ends', async () => {
    const { url } = await startH2((path, stream, session) => {
      session.goaway();
      stream.respond({ ':status': 200 });
      setTimeout(() => stream.end(path), 20);
    });
    const http2Client = client(url);
    const response = await http2Client.send(request('/last'));
    const closed = http2Client.close();
    expect(await response.body.text()).toBe('/last');
    await closed;
  });

  it('PINGs a session idle for the read-idle timeout and keeps using it when the PING is answered', async () => {
    const { url, sessions } = await startH2((path, stream) => {
      stream.respond({ ':status': 200 });
      stream.end(path);
    });
    const http2Client = client(url, noFallback, { readIdleTimeoutMs: 50, pingTimeoutMs: 5_000 });
    expect(await (await http2Client.send(request('/one'))).body.text()).toBe('/one');
    const [session] = sessions;
    await new Promise((resolve) => session?.once('ping', resolve));
    expect(await (await http2Client.send(request('/two'))).body.text()).toBe('/two');
    expect(sessions).toHaveLength(1);
  });

  it('destroys a session whose connection died silently, with nothing in flight, once its PING goes unanswered', async () => {
    const { url, sessions } = await startH2((path, stream) => {
      stream.respond({ ':status': 200 });
      stream.end(path);
    });
    const relay = await startRelay(url);
    const http2Client = client(relay.url, noFallback, { readIdleTimeoutMs: 50, pingTimeoutMs: 100 });
    expect(await (await http2Client.send(request('/one'))).body.text()).toBe('/one');
    relay.freeze();
    // No request waits on the dead connection: only the health check can notice it.
    await relay.firstClosedByClient;
    expect(await (await http2Client.send(request('/two'))).body.text()).toBe('/two');
    expect(sessions).toHaveLength(2);
  });

  it('rejects with the abort reason when the signal aborts before the answer', async () => {
    const { url } = await startH2(() => {});
    const controller = new AbortController();
    const sent = client(url).send(request('/never', { signal: controller.signal }));
    controller.abort(new Error('stop'));
    await expect(sent).rejects.toThrow();
  });
});
