import type { ServerResponse } from 'node:http';
import type { V1PersistentVolume } from '@kubernetes/client-node';
import { describe, expect, it, vi } from 'vitest';
import { isGone } from '../src/client/api-error.ts';
import { createKubeApi, type KubeApiOptions } from '../src/client/kube-api.ts';
import { resources, type WatchEvent } from '../src/client/resource-client.ts';
import { networkErrorCode } from '../src/client/retry.ts';
import { sendJson, status, useLoopbackApi } from './kube-api-server.ts';

const env = useLoopbackApi();

function pvs(options: KubeApiOptions = {}) {
  return createKubeApi(env.server.kubeConfig, { clock: env.clock, ...options }).resource(
    resources.persistentVolumes,
  );
}

function writeEvent(res: ServerResponse, type: string, object: unknown): void {
  res.write(`${JSON.stringify({ type, object })}\n`);
}

function startStream(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.flushHeaders();
}

const pv = (name: string, rv: string) => ({
  kind: 'PersistentVolume',
  apiVersion: 'v1',
  metadata: { name, resourceVersion: rv, creationTimestamp: '2024-05-01T10:00:00Z' },
});

describe('KubeApi watch', () => {
  it('streams deserialised events, bookmarks and ERROR events in order, then resolves on close', async () => {
    env.server.handle((_req, res) => {
      startStream(res);
      writeEvent(res, 'ADDED', pv('a', '11'));
      // One event split across writes, and two in one write.
      const modified = JSON.stringify({ type: 'MODIFIED', object: pv('a', '12') });
      res.write(modified.slice(0, 20));
      res.write(`${modified.slice(20)}\n${JSON.stringify({ type: 'DELETED', object: pv('a', '13') })}\n`);
      writeEvent(res, 'BOOKMARK', { kind: 'PersistentVolume', metadata: { resourceVersion: '14' } });
      writeEvent(res, 'ERROR', status(410, 'Expired', 'too old resource version'));
      res.end();
    });
    const events: WatchEvent<V1PersistentVolume>[] = [];
    await pvs().watch(
      {
        resourceVersion: '10',
        allowWatchBookmarks: true,
        timeoutSeconds: 300,
        labelSelector: 'a=b',
        fieldSelector: 'metadata.name=a',
      },
      (event) => events.push(event),
    );
    expect(Object.fromEntries(env.server.requests[0]?.query ?? [])).toEqual({
      watch: 'true',
      resourceVersion: '10',
      allowWatchBookmarks: 'true',
      timeoutSeconds: '300',
      labelSelector: 'a=b',
      fieldSelector: 'metadata.name=a',
    });
    expect(
      events.map((e) => [e.type, e.type === 'ERROR' ? e.object.code : e.object.metadata?.resourceVersion]),
    ).toEqual([
      ['ADDED', '11'],
      ['MODIFIED', '12'],
      ['DELETED', '13'],
      ['BOOKMARK', '14'],
      ['ERROR', 410],
    ]);
    const added = events[0];
    expect(added?.type === 'ADDED' && added.object.metadata?.creationTimestamp).toBeInstanceOf(Date);
    expect(events[4]).toMatchObject({ type: 'ERROR', object: { reason: 'Expired' } });
  });

  it('rejects with an ApiError when the watch request fails with 410', async () => {
    env.server.handle((_req, res) =>
      sendJson(res, 410, status(410, 'Expired', 'too old resource version: 1')),
    );
    await expect(pvs().watch({ resourceVersion: '1' }, () => {})).rejects.toSatisfy(isGone);
  });

  it('rejects when the server cannot be reached', async () => {
    await env.server.close();
    const error = await pvs()
      .watch({}, () => {})
      .catch((err: unknown) => err);
    expect(networkErrorCode(error)).toBe('ECONNREFUSED');
  });

  it('resolves when the caller aborts', async () => {
    env.server.handle((_req, res) => {
      startStream(res);
      writeEvent(res, 'ADDED', pv('a', '11'));
    });
    const controller = new AbortController();
    const events: string[] = [];
    const watching = pvs().watch({ signal: controller.signal }, (event) => {
      events.push(event.type);
      controller.abort();
    });
    await expect(watching).resolves.toBeUndefined();
    expect(events).toEqual(['ADDED']);
  });

  it('treats a connection lost mid-stream as a normal end of the watch', async () => {
    env.server.handle((_req, res, req) => {
      startStream(res);
      writeEvent(res, 'ADDED', pv('a', '11'));
      setImmediate(() => req.socket.destroy());
    });
    const events: string[] = [];
    await expect(pvs().watch({}, (event) => events.push(event.type))).resolves.toBeUndefined();
    expect(events).toEqual(['ADDED']);
  });

  it('closes a silent watch after timeoutSeconds plus 30 s of inactivity, and every chunk resets the guard', async () => {
    let response: ServerResponse | undefined;
    env.server.handle((_req, res) => {
      startStream(res);
      response = res;
    });
    const events: string[] = [];
    const watching = pvs().watch({ timeoutSeconds: 60 }, (event) => events.push(event.type));
    await vi.waitFor(() => expect(response).toBeDefined(), { timeout: 2000, interval: 5 });
    env.clock.advance(80_000);
    if (response) writeEvent(response, 'ADDED', pv('a', '11'));
    await vi.waitFor(() => expect(events).toEqual(['ADDED']), { timeout: 2000, interval: 5 });
    env.clock.advance(89_999);
    expect(env.clock.pendingTimers()).toBe(1);
    env.clock.advance(1);
    await expect(watching).resolves.toBeUndefined();
  });

  it('ends a watch silent for idleTimeoutMs normally and watches again on a new connection', async () => {
    const events: string[] = [];
    env.server.handle((_req, res) => {
      startStream(res);
      // Headers and one event, then silence with the connection left open.
      writeEvent(res, 'ADDED', pv('a', '11'));
    });
    const client = pvs();
    // undici measures this on its own timers: the manual clock does not reach it.
    await expect(
      client.watch({ idleTimeoutMs: 200 }, (event) => events.push(event.type)),
    ).resolves.toBeUndefined();
    expect(events).toEqual(['ADDED']);
    env.server.handle((_req, res) => {
      startStream(res);
      res.end();
    });
    await client.watch({}, () => {});
    const [silent, next] = env.server.requests;
    expect(next?.remotePort).not.toBe(silent?.remotePort);
  });

  it('rejects with the handler error when the event handler throws', async () => {
    env.server.handle((_req, res) => {
      startStream(res);
      writeEvent(res, 'ADDED', pv('a', '11'));
    });
    const boom = new Error('handler failed');
    await expect(
      pvs().watch({}, () => {
        throw boom;
      }),
    ).rejects.toBe(boom);
  });

  it('rejects on an undecodable line', async () => {
    env.server.handle((_req, res) => {
      startStream(res);
      res.end('{not json\n');
    });
    await expect(pvs().watch({}, () => {})).rejects.toThrow(SyntaxError);
  });

  it('is throttled by the client limiter', async () => {
    env.server.handle((_req, res) => {
      startStream(res);
      res.end();
    });
    const client = pvs({ rateLimit: { qps: 1, burst: 1 } });
    await client.watch({}, () => {});
    const second = client.watch({}, () => {});
    await vi.waitFor(() => expect(env.clock.nextTimerAt()).toBe(env.clock.now() + 1000), {
      timeout: 2000,
      interval: 5,
    });
    expect(env.server.requests).toHaveLength(1);
    env.clock.advance(1000);
    await second;
    expect(env.server.requests).toHaveLength(2);
  });
});
