import { createServer, type Server } from 'node:net';
import type { V1Lease } from '@kubernetes/client-node';
import { V1MicroTime } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { resources } from '../src/client/resource-client.ts';
import { ConfigurationError } from '../src/configuration-error.ts';
import type { Check } from '../src/http/health-server.ts';
import { type ProbeRegistry, ProvisionController } from '../src/provision-controller.ts';
import { FakeKubeApi } from '../src/testing/fake-api.ts';
import {
  eventually,
  Harness,
  manualHarness,
  newClaim,
  newStorageClass,
  provisionerName,
  pump,
  RecordingProvisioner,
} from './controller-fixtures.ts';

const objects = [
  newStorageClass('class-1', provisionerName),
  newClaim('claim-1', 'uid-1-1', 'class-1', provisionerName),
];

/** Collects the checks a controller registers, as a HealthServer would. */
class Probes implements ProbeRegistry {
  readonly health = new Map<string, Check>();
  readonly readiness = new Map<string, Check>();

  addHealthCheck(name: string, check: Check): void {
    this.health.set(name, check);
  }

  addReadinessCheck(name: string, check: Check): void {
    this.readiness.set(name, check);
  }

  /** Runs the named check: `'ok'`, or the failure message. */
  async outcome(kind: 'health' | 'readiness', name: string): Promise<string> {
    const check = this[kind].get(name);
    if (check === undefined) throw new Error(`no ${kind} check ${name}`);
    try {
      await check();
      return 'ok';
    } catch (err) {
      return (err as Error).message;
    }
  }
}

/** Like {@link Probes.outcome}, without yielding: observes the state as it is right now. */
function outcomeNow(check: Check | undefined): string {
  try {
    void check?.();
    return 'ok';
  } catch (err) {
    return (err as Error).message;
  }
}

const listeners: Server[] = [];
afterEach(async () => {
  await Promise.all(listeners.splice(0).map((l) => new Promise((resolve) => l.close(resolve))));
});

async function listening(): Promise<number> {
  const server = createServer();
  listeners.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as { port: number }).port;
}

async function freePort(): Promise<number> {
  const port = await listening();
  await new Promise((resolve) => listeners.pop()?.close(resolve));
  return port;
}

/** A leader on a manual clock with its checks registered, 2 s into its run: it holds the Lease. */
async function runningLeader(): Promise<
  ReturnType<typeof manualHarness> & { probes: Probes; liveness: Check | undefined }
> {
  const { clock, api, harness } = manualHarness({
    objects,
    leaderElection: { namespace: 'kube-system' },
  });
  const probes = new Probes();
  harness.controller.registerChecks(probes);
  const liveness = probes.health.get('leader-election');
  harness.start();
  await pump(clock, 2_000);
  return { clock, api, harness, probes, liveness };
}

describe('ProvisionController built-in server (metricsServer)', () => {
  it('serves the controller metrics and both probes while running, and closes after stop', async () => {
    const port = await freePort();
    const harness = new Harness({ objects, metricsServer: { port, address: '127.0.0.1' } }).start();
    const base = `http://127.0.0.1:${port}`;
    await eventually(() => expect(harness.volumes()).toHaveLength(1));
    // The success counter is written after the PV save, so it may trail the PV by a moment.
    const metrics = await eventually(async () => {
      const text = await (await fetch(`${base}/metrics`)).text();
      expect(text).toMatch(
        /^controller_persistentvolumeclaim_provision_total\{class="class-1",source=""\} 1$/m,
      );
      return text;
    });
    expect(metrics).toMatch(/^workqueue_adds_total\{name="claims"\} 1$/m);
    expect(metrics).toContain('# TYPE controller_persistentvolume_delete_duration_seconds histogram');
    expect(metrics).toContain('process_cpu_user_seconds_total');
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.text()).toContain('[+]provision-controller ok');
    expect((await fetch(`${base}/healthz`)).status).toBe(200);

    await harness.stop();
    await expect(fetch(`${base}/metrics`)).rejects.toThrow();
  });

  it('serves a custom metrics path, and no process metrics for a host-supplied registry', async () => {
    const port = await freePort();
    const harness = new Harness({
      objects,
      metricsServer: { port, address: '127.0.0.1', path: '/custom' },
      metricsRegistry: new Registry(),
    }).start();
    const base = `http://127.0.0.1:${port}`;
    await eventually(() => expect(harness.volumes()).toHaveLength(1));
    const text = await (await fetch(`${base}/custom`)).text();
    expect(text).toContain('controller_persistentvolumeclaim_provision_total');
    expect(text).not.toContain('process_cpu_user_seconds_total');
    expect((await fetch(`${base}/metrics`)).status).toBe(404);
    await harness.stop();
  });

  it('rejects run before starting any work when the port is taken', async () => {
    const port = await listening();
    const harness = new Harness({ objects, metricsServer: { port, address: '127.0.0.1' } });
    await expect(harness.controller.run()).rejects.toMatchObject({ code: 'EADDRINUSE' });
    expect(harness.api.actions()).toEqual([]);
    expect(harness.provisioner.provisionCalls).toEqual([]);
  });

  it.each(['/healthz', '/readyz'])('refuses metrics path %s, which the probes use', (path) => {
    const create = (): ProvisionController =>
      new ProvisionController({
        api: new FakeKubeApi(),
        provisionerName,
        provisioner: new RecordingProvisioner(),
        metricsServer: { path },
      });
    expect(create).toThrow(ConfigurationError);
    expect(create).toThrow('metricsServer.path must not be /healthz or /readyz');
  });
});

describe('ProvisionController.registerChecks', () => {
  it('is ready only while running with synced caches', async () => {
    const api = new FakeKubeApi();
    let releaseList: () => void = () => {};
    const listed = new Promise<void>((resolve) => {
      releaseList = resolve;
    });
    api.prependReactor({ resource: 'persistentvolumes', verb: 'list' }, () => listed.then(() => undefined));
    const harness = new Harness({ objects, api });
    const probes = new Probes();
    harness.controller.registerChecks(probes);
    expect([...probes.health.keys()]).toEqual([]);
    expect(await probes.outcome('readiness', 'provision-controller')).toBe('not started');

    harness.start();
    await eventually(async () =>
      expect(await probes.outcome('readiness', 'provision-controller')).toBe('caches not synced: volumes'),
    );
    releaseList();
    await eventually(async () =>
      expect(await probes.outcome('readiness', 'provision-controller')).toBe('ok'),
    );

    await harness.stop();
    expect(await probes.outcome('readiness', 'provision-controller')).toBe('stopped');
  });

  it('keeps a standby replica ready and live without starting its informers', async () => {
    const api = new FakeKubeApi();
    const now = new V1MicroTime(Date.now());
    const lease: V1Lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'foo.bar-baz', namespace: 'kube-system' },
      spec: { holderIdentity: 'other', leaseDurationSeconds: 60, acquireTime: now, renewTime: now },
    };
    api.seed(resources.leases, lease);
    const harness = new Harness({ objects, api, leaderElection: { namespace: 'kube-system' } });
    const probes = new Probes();
    harness.controller.registerChecks(probes);
    harness.start();
    await eventually(() => expect(api.actions().some((a) => a.resource === 'leases')).toBe(true));

    expect(await probes.outcome('readiness', 'provision-controller')).toBe('ok');
    expect(await probes.outcome('health', 'leader-election')).toBe('ok');
    expect(api.actions().filter((a) => a.resource !== 'leases')).toEqual([]);
    await harness.stop();
  });

  it('fails liveness once the leader has gone leaseDuration + 20 s without renewing', async () => {
    const { clock, api, harness, probes, liveness } = await runningLeader();
    expect(api.objects(resources.leases, 'kube-system')[0]?.spec?.holderIdentity).toBe(
      harness.controller.identity,
    );
    expect(await probes.outcome('readiness', 'provision-controller')).toBe('ok');

    // Time jumps while nothing else runs, as in a paused process: renewals could not happen.
    // The last renewal was at most 2 s ago (one retry period).
    clock.advance(32_900);
    expect(outcomeNow(liveness)).toBe('ok');
    clock.advance(2_200);
    expect(outcomeNow(liveness)).toBe(
      'leader election: failed to renew leadership on lease kube-system/foo.bar-baz',
    );

    // Once the renewals run again the leader is healthy.
    await pump(clock, 2_000);
    expect(await probes.outcome('health', 'leader-election')).toBe('ok');
    const stopped = harness.stop();
    await pump(clock, 1_000);
    await stopped;
  });

  it('stays live while a renewal is slow but within the renew deadline', async () => {
    const { clock, api, harness, liveness } = await runningLeader();
    const renewTime = (): number =>
      new Date(api.objects(resources.leases, 'kube-system')[0]?.spec?.renewTime ?? 0).getTime();
    const before = renewTime();

    // The next renewal, due within 2 s, takes 7.5 s: it returns before the fence closes (10 s after the
    // last renewal was sent), and 9.5 s pass between two renewals.
    const remove = api.prependReactor({ resource: 'leases', verb: 'update' }, () => {
      remove();
      return new Promise((resolve) => clock.setTimer(() => resolve(undefined), 7_500));
    });
    const outcomes = new Set<string>();
    for (let elapsed = 0; elapsed < 13_000; elapsed += 100) {
      await pump(clock, 100);
      outcomes.add(outcomeNow(liveness));
    }
    expect(renewTime()).toBeGreaterThanOrEqual(before + 9_000);
    expect([...outcomes]).toEqual(['ok']);
    const stopped = harness.stop();
    await pump(clock, 1_000);
    await stopped;
  });
});
