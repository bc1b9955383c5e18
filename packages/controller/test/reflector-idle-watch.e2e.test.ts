// A watch whose TCP connection is black-holed (open, but nothing passes any more) is replaced once
// it has been silent for watchIdleTimeout: the informer sees a claim created afterwards, over a new
// connection, without relisting. The real informer over createKubeApi, through a TCP proxy in front
// of the real kube-apiserver.
import { waitFor } from '@kube-provisioner/testenv';
import { KubeConfig, type V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { afterEach, expect, it } from 'vitest';
import { createKubeApi } from '../src/client/kube-api.ts';
import { resources } from '../src/client/resource-client.ts';
import { SharedInformer } from '../src/informer/shared-informer.ts';
import { useE2eCluster } from './support/e2e-cluster.ts';
import { startTcpProxy, type TcpProxy } from './support/tcp-proxy.ts';

const { env, client } = useE2eCluster();
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The admin kubeconfig, pointed at `proxy` instead of kube-apiserver. */
function throughProxy(proxy: TcpProxy): KubeConfig {
  const original = env.kubeConfig;
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: original.clusters.map((cluster) => ({ ...cluster, server: `https://${proxy.address}` })),
    users: original.users,
    contexts: original.contexts,
    currentContext: original.getCurrentContext(),
  });
  return kubeConfig;
}

const claim = (name: string): V1PersistentVolumeClaim => ({
  metadata: { name },
  spec: {
    accessModes: ['ReadWriteOnce'],
    storageClassName: 'idle-watch-none',
    resources: { requests: { storage: '1Mi' } },
  },
});

it('replaces a watch whose connection is black-holed, without a relist', async () => {
  const namespace = await env.namespace('idle-watch');
  const server = new URL(env.kubeConfig.getCurrentCluster()?.server ?? '');
  const proxy = await startTcpProxy({ host: server.hostname, port: Number(server.port) });
  cleanups.push(() => proxy.close());
  const proxied = createKubeApi(throughProxy(proxy), { rateLimit: { qps: Infinity, burst: 1 } });
  cleanups.push(() => proxied.close());
  const informer = new SharedInformer(proxied.resource(resources.persistentVolumeClaims), {
    namespace,
    watchIdleTimeout: 3_000,
  });
  const stop = new AbortController();
  const running = informer.run(stop.signal);
  cleanups.push(async () => {
    stop.abort();
    await running;
  });
  const claims = client().resource(resources.persistentVolumeClaims);
  const cached = (name: string): boolean => informer.store.getByKey(`${namespace}/${name}`) !== undefined;

  // The watch streams through the proxy: a claim created now reaches the cache through it.
  await claims.create(claim('before'), { namespace });
  await waitFor(() => cached('before'), { timeoutMs: 20_000, description: 'the first claim in the cache' });
  expect(informer.stats).toMatchObject({ lists: 1, watches: 1, idleWatches: 0 });

  const acceptedBefore = proxy.accepted;
  expect(proxy.blackHole()).toBeGreaterThanOrEqual(1);
  await claims.create(claim('after'), { namespace });
  await waitFor(() => cached('after'), {
    timeoutMs: 30_000,
    description: 'the claim created after the black hole in the cache',
  });
  expect(informer.stats.lists).toBe(1);
  expect(informer.stats.idleWatches).toBeGreaterThanOrEqual(1);
  expect(proxy.accepted).toBeGreaterThan(acceptedBefore);
});
