import type { V1PersistentVolume, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { describe, expect, it, vi } from 'vitest';
import {
  isAlreadyExists,
  isApiError,
  isConflict,
  isNotFound,
  isTooManyRequests,
} from '../src/client/api-error.ts';
import { createKubeApi, type KubeApiOptions } from '../src/client/kube-api.ts';
import { resources } from '../src/client/resource-client.ts';
import { sendJson, status, useLoopbackApi } from './kube-api-server.ts';

const env = useLoopbackApi();

function api(options: KubeApiOptions = {}) {
  return createKubeApi(env.server.kubeConfig, { clock: env.clock, requestTimeoutMs: 0, ...options });
}

const pvJson = {
  apiVersion: 'v1',
  kind: 'PersistentVolume',
  metadata: { name: 'pv-1', resourceVersion: '7', creationTimestamp: '2024-05-01T10:00:00Z' },
  spec: { capacity: { storage: '1Gi' } },
};

function waitForRequests(count: number): Promise<void> {
  return vi.waitFor(() => expect(env.server.requests).toHaveLength(count), { timeout: 2000, interval: 5 });
}

function waitForTimers(count: number): Promise<void> {
  return vi.waitFor(() => expect(env.clock.pendingTimers()).toBe(count), { timeout: 2000, interval: 5 });
}

describe('createKubeApi: paths, verbs and bodies', () => {
  it('gets a cluster-scoped object as a model with Date timestamps, authenticated', async () => {
    env.server.handle((_req, res) => sendJson(res, 200, pvJson));
    const pv = await api().resource(resources.persistentVolumes).get('pv-1');
    expect(env.server.requests[0]).toMatchObject({ method: 'GET', path: '/api/v1/persistentvolumes/pv-1' });
    expect(env.server.requests[0]?.headers.authorization).toBe('Bearer secret-token');
    expect(pv.metadata?.creationTimestamp).toBeInstanceOf(Date);
    expect(pv.spec?.capacity).toEqual({ storage: '1Gi' });
  });

  it('lists a grouped resource with selectors, paging and resourceVersion in the query', async () => {
    env.server.handle((_req, res) =>
      sendJson(res, 200, {
        kind: 'StorageClassList',
        metadata: { resourceVersion: '42', continue: 'next' },
        items: [{ metadata: { name: 'fast', creationTimestamp: '2024-05-01T10:00:00Z' }, provisioner: 'x' }],
      }),
    );
    const list = await api().resource(resources.storageClasses).list({
      labelSelector: 'a=b',
      fieldSelector: 'metadata.name=fast',
      limit: 500,
      continue: 'c1',
      resourceVersion: '0',
    });
    const request = env.server.requests[0];
    expect(request?.path).toBe('/apis/storage.k8s.io/v1/storageclasses');
    expect(Object.fromEntries(request?.query ?? [])).toEqual({
      labelSelector: 'a=b',
      fieldSelector: 'metadata.name=fast',
      limit: '500',
      continue: 'c1',
      resourceVersion: '0',
    });
    expect(list.metadata).toEqual({ resourceVersion: '42', continue: 'next' });
    expect(list.items[0]?.metadata?.creationTimestamp).toBeInstanceOf(Date);
  });

  it('lists a namespaced resource across all namespaces when no namespace is given', async () => {
    env.server.handle((_req, res) => sendJson(res, 200, { metadata: { resourceVersion: '1' }, items: [] }));
    await api().resource(resources.persistentVolumeClaims).list();
    await api().resource(resources.persistentVolumeClaims).list({ namespace: 'ns1' });
    expect(env.server.requests.map((r) => r.path)).toEqual([
      '/api/v1/persistentvolumeclaims',
      '/api/v1/namespaces/ns1/persistentvolumeclaims',
    ]);
  });

  it('decodes a LIST body that arrives in small pieces, passing each item through the transform', async () => {
    const body = JSON.stringify({
      kind: 'PersistentVolumeList',
      metadata: { resourceVersion: '9' },
      items: [pvJson, { ...pvJson, metadata: { ...pvJson.metadata, name: 'pv-2' } }],
    });
    env.server.handle((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      for (let at = 0; at < body.length; at += 7) res.write(body.slice(at, at + 7));
      res.end();
    });
    const seen: unknown[] = [];
    const list = await api()
      .resource(resources.persistentVolumes)
      .list({
        transform: (pv) => {
          seen.push(pv.metadata?.creationTimestamp);
          return { ...pv, spec: {} };
        },
      });
    expect(seen).toEqual([expect.any(Date), expect.any(Date)]);
    expect(list.items.map((pv) => [pv.metadata?.name, pv.spec])).toEqual([
      ['pv-1', {}],
      ['pv-2', {}],
    ]);
    expect(list.metadata).toEqual({ resourceVersion: '9' });
  });

  it('leaves managedFields out of listed items when asked, and keeps them otherwise', async () => {
    const managedFields = [{ manager: 'kubectl', operation: 'Apply', fieldsV1: { 'f:spec': {} } }];
    const item = { ...pvJson, metadata: { ...pvJson.metadata, managedFields } };
    env.server.handle((_req, res) =>
      sendJson(res, 200, { metadata: { resourceVersion: '9' }, items: [item] }),
    );
    const volumes = api().resource(resources.persistentVolumes);
    const [omitted] = (await volumes.list({ omitManagedFields: true })).items;
    expect(omitted?.metadata).toEqual({
      name: 'pv-1',
      resourceVersion: '7',
      creationTimestamp: expect.any(Date),
    });
    const [kept] = (await volumes.list()).items;
    expect(kept?.metadata?.managedFields).toEqual(managedFields);
  });

  it('retries a LIST whose body was cut short and keeps only the complete answer', async () => {
    const full = JSON.stringify({ metadata: { resourceVersion: '9' }, items: [pvJson, pvJson] });
    env.server.handle((_req, res, req) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      if (env.server.requests.length > 1) return void res.end(full);
      // The first item is complete when the connection drops.
      res.write(full.slice(0, full.indexOf('},{') + 2), () => req.socket.destroy());
    });
    const listed = api().resource(resources.persistentVolumes).list();
    await waitForTimers(1);
    env.clock.advance(500);
    const list = await listed;
    expect(list.items).toHaveLength(2);
    expect(env.server.requests).toHaveLength(2);
  });

  it('creates in the object namespace and sends apiVersion and kind', async () => {
    env.server.handle((req, res) => sendJson(res, 201, JSON.parse(req.body)));
    const claim: V1PersistentVolumeClaim = { metadata: { name: 'c', namespace: 'ns1' }, spec: {} };
    await api().resource(resources.persistentVolumeClaims).create(claim);
    const request = env.server.requests[0];
    expect(request).toMatchObject({ method: 'POST', path: '/api/v1/namespaces/ns1/persistentvolumeclaims' });
    expect(request?.headers['content-type']).toBe('application/json');
    expect(JSON.parse(request?.body ?? '')).toMatchObject({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'c', namespace: 'ns1' },
    });
  });

  it('updates with PUT on the item path and serialises Dates', async () => {
    env.server.handle((req, res) => sendJson(res, 200, JSON.parse(req.body)));
    const pv: V1PersistentVolume = {
      metadata: { name: 'pv-1', resourceVersion: '7', creationTimestamp: new Date('2024-05-01T10:00:00Z') },
    };
    const saved = await api().resource(resources.persistentVolumes).update(pv);
    expect(env.server.requests[0]).toMatchObject({ method: 'PUT', path: '/api/v1/persistentvolumes/pv-1' });
    expect(JSON.parse(env.server.requests[0]?.body ?? '').metadata.creationTimestamp).toBe(
      '2024-05-01T10:00:00.000Z',
    );
    expect(saved.metadata?.creationTimestamp).toEqual(new Date('2024-05-01T10:00:00Z'));
  });

  it('sends the content type of each patch type', async () => {
    env.server.handle((_req, res) => sendJson(res, 200, pvJson));
    const client = api().resource(resources.persistentVolumes);
    await client.patch('pv-1', { metadata: { annotations: { a: 'b' } } }, 'merge');
    await client.patch('pv-1', { metadata: { finalizers: ['f'] } }, 'strategic');
    await client.patch('pv-1', [{ op: 'remove', path: '/metadata/finalizers/0' }], 'json');
    expect(env.server.requests.map((r) => [r.method, r.headers['content-type']])).toEqual([
      ['PATCH', 'application/merge-patch+json'],
      ['PATCH', 'application/strategic-merge-patch+json'],
      ['PATCH', 'application/json-patch+json'],
    ]);
    expect(JSON.parse(env.server.requests[2]?.body ?? '')).toEqual([
      { op: 'remove', path: '/metadata/finalizers/0' },
    ]);
  });

  it('patches the status subresource on its own path', async () => {
    env.server.handle((_req, res) => sendJson(res, 200, pvJson));
    await api()
      .resource(resources.persistentVolumeClaims)
      .patch('data', { status: { capacity: { storage: '2Gi' } } }, 'merge', {
        namespace: 'ns',
        subresource: 'status',
      });
    expect(env.server.requests[0]).toMatchObject({
      method: 'PATCH',
      path: '/api/v1/namespaces/ns/persistentvolumeclaims/data/status',
    });
  });

  it('deletes with DeleteOptions carrying the preconditions', async () => {
    env.server.handle((_req, res) => sendJson(res, 200, { kind: 'Status', status: 'Success' }));
    await api()
      .resource(resources.persistentVolumes)
      .delete('pv-1', { preconditions: { uid: 'u1' }, propagationPolicy: 'Background' });
    expect(env.server.requests[0]).toMatchObject({
      method: 'DELETE',
      path: '/api/v1/persistentvolumes/pv-1',
    });
    expect(JSON.parse(env.server.requests[0]?.body ?? '')).toEqual({
      kind: 'DeleteOptions',
      apiVersion: 'v1',
      preconditions: { uid: 'u1' },
      propagationPolicy: 'Background',
    });
  });

  it('rejects a namespaced call without a namespace before sending anything', async () => {
    await expect(api().resource(resources.persistentVolumeClaims).get('c')).rejects.toThrow(/namespace/);
    expect(env.server.requests).toHaveLength(0);
  });
});

describe('createKubeApi: errors', () => {
  it('maps a Status body to an ApiError whose reason tells AlreadyExists from Conflict', async () => {
    env.server.handle((req, res) =>
      req.method === 'POST'
        ? sendJson(res, 409, status(409, 'AlreadyExists', 'persistentvolumes "pv-1" already exists'))
        : sendJson(res, 409, status(409, 'Conflict', 'the object has been modified')),
    );
    const client = api().resource(resources.persistentVolumes);
    const created = client.create({ metadata: { name: 'pv-1' } });
    await expect(created).rejects.toSatisfy(isAlreadyExists);
    await expect(created).rejects.toThrow('persistentvolumes "pv-1" already exists');
    const updated = client.update({ metadata: { name: 'pv-1', resourceVersion: '1' } });
    await expect(updated).rejects.toSatisfy((err) => isConflict(err) && !isAlreadyExists(err));
  });

  it('maps a non-Status body to an ApiError with the HTTP code', async () => {
    env.server.handle((_req, res) => {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('page not found');
    });
    const error = await api()
      .resource(resources.nodes)
      .get('n')
      .catch((err: unknown) => err);
    expect(isNotFound(error)).toBe(true);
    expect(isApiError(error) && error.message).toBe('page not found');
  });

  it('retries a 429 after its Retry-After, for writes too', async () => {
    env.server.handle((_req, res) =>
      env.server.requests.length === 1
        ? sendJson(res, 429, status(429, 'TooManyRequests', 'slow down'), { 'retry-after': '3' })
        : sendJson(res, 201, pvJson),
    );
    const created = api()
      .resource(resources.persistentVolumes)
      .create({ metadata: { name: 'pv-1' } });
    await waitForTimers(1);
    expect(env.clock.nextTimerAt()).toBe(env.clock.now() + 3000);
    env.clock.advance(2999);
    expect(env.server.requests).toHaveLength(1);
    env.clock.advance(1);
    await expect(created).resolves.toMatchObject({ metadata: { name: 'pv-1' } });
    expect(env.server.requests).toHaveLength(2);
  });

  it('gives up on 429 after maxRetries', async () => {
    env.server.handle((_req, res) =>
      sendJson(res, 429, status(429, 'TooManyRequests', 'no'), { 'retry-after': '1' }),
    );
    const got = api({ retry: { maxRetries: 1 } })
      .resource(resources.nodes)
      .get('n');
    await waitForTimers(1);
    env.clock.advance(1000);
    await expect(got).rejects.toSatisfy(isTooManyRequests);
    expect(env.server.requests).toHaveLength(2);
  });

  it('retries a read after a connection reset, with backoff', async () => {
    env.server.handle((_req, res, req) =>
      env.server.requests.length === 1 ? req.socket.destroy() : sendJson(res, 200, pvJson),
    );
    const got = api().resource(resources.persistentVolumes).get('pv-1');
    await waitForTimers(1);
    expect(env.clock.nextTimerAt()).toBe(env.clock.now() + 500);
    env.clock.advance(500);
    await expect(got).resolves.toMatchObject({ metadata: { name: 'pv-1' } });
    expect(env.server.requests).toHaveLength(2);
  });

  it('does not retry a write after a connection reset', async () => {
    env.server.handle((_req, _res, req) => req.socket.destroy());
    const created = api()
      .resource(resources.persistentVolumes)
      .create({ metadata: { name: 'pv-1' } });
    await expect(created).rejects.toThrow();
    expect(env.server.requests).toHaveLength(1);
  });

  it('fails a call that outlives the request timeout, retries included', async () => {
    env.server.handle(() => {});
    const got = api({ requestTimeoutMs: 30_000 }).resource(resources.nodes).get('n');
    await waitForRequests(1);
    env.clock.advance(30_000);
    await expect(got).rejects.toMatchObject({ name: 'TimeoutError' });
  });

  it('rejects with the abort reason when the caller aborts', async () => {
    env.server.handle(() => {});
    const controller = new AbortController();
    const got = api().resource(resources.nodes).get('n', { signal: controller.signal });
    await waitForRequests(1);
    const reason = new Error('stop');
    controller.abort(reason);
    await expect(got).rejects.toBe(reason);
  });
});

describe('createKubeApi: rate limiting', () => {
  it('throttles calls beyond the burst to the QPS', async () => {
    env.server.handle((_req, res) => sendJson(res, 200, pvJson));
    const client = api({ rateLimit: { qps: 2, burst: 2 } }).resource(resources.persistentVolumes);
    const calls = [client.get('a'), client.get('b'), client.get('c')];
    await waitForRequests(2);
    await waitForTimers(1);
    expect(env.clock.nextTimerAt()).toBe(env.clock.now() + 500);
    env.clock.advance(500);
    await Promise.all(calls);
    expect(env.server.requests.map((r) => r.path.split('/').pop())).toEqual(['a', 'b', 'c']);
  });

  it('gives withRateLimit clients their own limiter', async () => {
    env.server.handle((_req, res) => sendJson(res, 200, pvJson));
    const main = api({ rateLimit: { qps: 1, burst: 1 } });
    const lease = main.withRateLimit({ qps: 1, burst: 1 });
    await main.resource(resources.persistentVolumes).get('a');
    const throttled = main.resource(resources.persistentVolumes).get('b');
    await lease.resource(resources.leases).get('l', { namespace: 'kube-system' });
    expect(env.server.requests.map((r) => r.path)).toEqual([
      '/api/v1/persistentvolumes/a',
      '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/l',
    ]);
    env.clock.advance(1000);
    await throttled;
    expect(env.server.requests).toHaveLength(3);
  });
});

describe('createKubeApi: the check before sending', () => {
  it('runs beforeSend after the throttle: a write held there is not sent once the check fails', async () => {
    env.server.handle((_req, res) => sendJson(res, 201, pvJson));
    const client = api({ rateLimit: { qps: 1, burst: 1 } }).resource(resources.persistentVolumes);
    let leading = true;
    const beforeSend = () => {
      if (!leading) throw new Error('term ended');
    };
    await client.create({ metadata: { name: 'pv-1' } }, { beforeSend });
    const held = client.create({ metadata: { name: 'pv-2' } }, { beforeSend });
    await waitForTimers(1);
    leading = false;
    env.clock.advance(1000);
    await expect(held).rejects.toThrow('term ended');
    expect(env.server.requests).toHaveLength(1);
  });

  it('runs beforeSend again before a retry', async () => {
    let answers = 0;
    env.server.handle((_req, res) => {
      answers++;
      sendJson(res, 429, status(429, 'TooManyRequests', 'slow down'), { 'retry-after': '1' });
    });
    let checks = 0;
    const beforeSend = () => {
      checks++;
      if (checks > 1) throw new Error('term ended');
    };
    const call = api().resource(resources.persistentVolumes).delete('pv-1', { beforeSend });
    await waitForTimers(1);
    env.clock.advance(1000);
    await expect(call).rejects.toThrow('term ended');
    expect({ answers, checks }).toEqual({ answers: 1, checks: 2 });
  });
});

describe('createKubeApi: credentials', () => {
  const setToken = (token: string): void => {
    (env.server.kubeConfig.getCurrentUser() as { token?: string }).token = token;
  };

  it('reuses resolved credentials, and after a 401 retries once with freshly resolved ones', async () => {
    env.server.handle((req, res) =>
      req.headers.authorization === 'Bearer secret-token' && env.server.requests.length > 1
        ? sendJson(res, 401, status(401, 'Unauthorized', 'token expired'))
        : sendJson(res, 201, pvJson),
    );
    const volumes = api().resource(resources.persistentVolumes);
    await volumes.get('pv-1');
    setToken('rotated-token');
    await expect(volumes.create({ metadata: { name: 'pv-1' } })).resolves.toMatchObject({
      metadata: { name: 'pv-1' },
    });
    expect(env.server.requests.map((r) => r.headers.authorization)).toEqual([
      'Bearer secret-token',
      'Bearer secret-token',
      'Bearer rotated-token',
    ]);
  });

  it('resolves credentials again after a minute without a 401', async () => {
    env.server.handle((_req, res) => sendJson(res, 200, pvJson));
    const volumes = api().resource(resources.persistentVolumes);
    await volumes.get('pv-1');
    setToken('rotated-token');
    env.clock.advance(59_999);
    await volumes.get('pv-1');
    env.clock.advance(1);
    await volumes.get('pv-1');
    expect(env.server.requests.map((r) => r.headers.authorization)).toEqual([
      'Bearer secret-token',
      'Bearer secret-token',
      'Bearer rotated-token',
    ]);
  });

  it('rejects with the 401 when fresh credentials are refused too', async () => {
    env.server.handle((_req, res) => sendJson(res, 401, status(401, 'Unauthorized', 'who are you')));
    const error = await api()
      .resource(resources.persistentVolumes)
      .create({ metadata: { name: 'pv-1' } })
      .catch((err: unknown) => err);
    expect(isApiError(error) && error.statusCode).toBe(401);
    expect(env.server.requests).toHaveLength(2);
  });

  it('keeps connections alive across requests', async () => {
    env.server.handle((_req, res) => sendJson(res, 200, pvJson));
    const volumes = api().resource(resources.persistentVolumes);
    for (let index = 0; index < 20; index++) await volumes.get('pv-1');
    // A connection goes back to the pool a tick after its response, so a request sent at once may
    // open a second one; never one per request.
    expect(new Set(env.server.requests.map((r) => r.remotePort)).size).toBeLessThanOrEqual(2);
  });
});
