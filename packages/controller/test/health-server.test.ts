import { createServer } from 'node:net';
import { Counter, Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { HealthServer } from '../src/http/health-server.ts';

let server: HealthServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(health: HealthServer): Promise<string> {
  server = health;
  const port = await health.listen();
  return `http://127.0.0.1:${port}`;
}

describe('HealthServer', () => {
  it('serves the merged registries on /metrics, with process metrics when asked', async () => {
    const a = new Registry();
    const b = new Registry();
    new Counter({ name: 'a_total', help: 'a', registers: [a] }).inc(2);
    new Counter({ name: 'b_total', help: 'b', registers: [b] }).inc();
    const base = await start(
      new HealthServer({ address: '127.0.0.1', registries: [a, b], processMetrics: true }),
    );
    const response = await fetch(`${base}/metrics`);
    const text = await response.text();
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/plain');
    expect(text).toMatch(/^a_total 2$/m);
    expect(text).toMatch(/^b_total 1$/m);
    expect(text).toContain('process_cpu_user_seconds_total');
  });

  it('serves metrics on a configured path only', async () => {
    const base = await start(new HealthServer({ address: '127.0.0.1', metricsPath: '/custom' }));
    expect((await fetch(`${base}/custom`)).status).toBe(200);
    expect((await fetch(`${base}/metrics`)).status).toBe(404);
    expect((await fetch(`${base}/custom`, { method: 'POST' })).status).toBe(405);
  });

  it('answers /healthz 200 while checks pass and 500 naming the failing check', async () => {
    const health = new HealthServer({ address: '127.0.0.1' });
    let leaderHealthy = true;
    health.addHealthCheck('ping', () => {});
    health.addHealthCheck('leaderElection', () => {
      if (!leaderHealthy) throw new Error('lease expired 20s ago');
    });
    const base = await start(health);
    const healthy = await fetch(`${base}/healthz`);
    expect(healthy.status).toBe(200);
    expect(await healthy.text()).toBe('[+]ping ok\n[+]leaderElection ok\nhealthz check passed\n');
    leaderHealthy = false;
    const unhealthy = await fetch(`${base}/healthz`);
    expect(unhealthy.status).toBe(500);
    expect(await unhealthy.text()).toContain('[-]leaderElection failed: lease expired 20s ago\n');
  });

  it('answers /readyz 500 until async readiness checks pass', async () => {
    const health = new HealthServer({ address: '127.0.0.1' });
    let synced = false;
    health.addReadinessCheck('informers', async () => {
      if (!synced) throw new Error('caches not synced');
    });
    const base = await start(health);
    const before = await fetch(`${base}/readyz`);
    expect(before.status).toBe(500);
    expect(await before.text()).toContain('[-]informers failed: caches not synced');
    synced = true;
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
  });

  it('rejects listen when the port is taken, and closes gracefully', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    const health = new HealthServer({ address: '127.0.0.1', port });
    await expect(health.listen()).rejects.toMatchObject({ code: 'EADDRINUSE' });
    await new Promise<void>((resolve) => blocker.close(() => resolve()));
    const base = await start(health);
    expect(base).toBe(`http://127.0.0.1:${port}`);
    await health.close();
    await expect(fetch(`${base}/healthz`)).rejects.toThrow();
  });
});
