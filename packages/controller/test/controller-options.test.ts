import { Gauge, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { resources } from '../src/client/resource-client.ts';
import { ConfigurationError, isConfigurationError } from '../src/configuration-error.ts';
import { SharedInformer } from '../src/informer/shared-informer.ts';
import { uidIndex } from '../src/informer/store.ts';
import { createControllerMetrics } from '../src/internal/controller-metrics.ts';
import { inClusterNamespace, resolveOptions } from '../src/internal/resolve-options.ts';
import { ProvisionController } from '../src/provision-controller.ts';
import type { ProvisionControllerOptions } from '../src/provision-controller-options.ts';
import { FakeKubeApi } from '../src/testing/fake-api.ts';
import { ItemExponentialFailureRateLimiter } from '../src/workqueue/rate-limiters.ts';
import { RecordingProvisioner } from './controller-fixtures.ts';

const base = (): ProvisionControllerOptions => ({
  api: new FakeKubeApi(),
  provisionerName: 'example.com/hostpath',
  provisioner: new RecordingProvisioner(),
  leaderElection: { namespace: 'kube-system' },
});

describe('options', () => {
  it('applies the defaults (the Go ones, but the queue PV store) and freezes the result', () => {
    const resolved = resolveOptions(base());
    expect(resolved).toMatchObject({
      resyncPeriodMs: 900_000,
      threadiness: 4,
      failedProvisionThreshold: 15,
      failedDeleteThreshold: 15,
      retryIntervalMaxMs: 300_000,
      leaderElection: {
        enabled: true,
        namespace: 'kube-system',
        leaseDurationMs: 15_000,
        renewDeadlineMs: 10_000,
        retryPeriodMs: 2_000,
        releaseOnShutdown: true,
        onLost: 'campaign',
      },
      metricsServer: { port: 0, address: '0.0.0.0', path: '/metrics' },
      pvSave: { strategy: 'queue', workers: 4 },
      rescheduleMode: 'merge-patch',
      apiRequestTimeoutMs: 30_000,
      eventRateLimit: { qps: 20, burst: 30 },
    });
    expect(Object.isFrozen(resolved)).toBe(true);
  });

  it('lists every problem at once', () => {
    const error = (() => {
      try {
        resolveOptions({ ...base(), pvSave: { strategy: 'queue', workers: 0 }, threadiness: 0 });
      } catch (err) {
        return err;
      }
      return undefined;
    })();
    expect(isConfigurationError(error)).toBe(true);
    expect([...(error as ConfigurationError).problems].sort()).toEqual([
      'pvSave.workers must be an integer in [1, 9007199254740991], got 0',
      'threadiness must be an integer in [1, 9007199254740991], got 0',
    ]);
  });

  it('refuses an option it does not know, such as a Go option name, instead of ignoring it', () => {
    const options = {
      ...base(),
      CreateProvisionedPVRetryCount: 3,
      threadines: 2,
    } as ProvisionControllerOptions;
    expect(() => resolveOptions(options)).toThrow(/unknown option CreateProvisionedPVRetryCount \(/);
    expect(() => resolveOptions(options)).toThrow(/unknown option threadines \(/);
    // Every documented option is known, additionalProvisionerNames included.
    expect(() =>
      resolveOptions({ ...base(), additionalProvisionerNames: ['b'], threadiness: 2 }),
    ).not.toThrow();
  });

  it('resolves the process groups, the defaults filling the fields left out', () => {
    const { leaderElection, metricsServer } = resolveOptions({
      ...base(),
      leaderElection: {
        namespace: 'ns',
        leaseDurationMs: 20_000,
        releaseOnShutdown: false,
        onLost: 'reject',
      },
      metricsServer: { port: 8080, path: '/m' },
    });
    expect({ leaderElection, metricsServer }).toEqual({
      leaderElection: {
        enabled: true,
        namespace: 'ns',
        leaseDurationMs: 20_000,
        renewDeadlineMs: 10_000,
        retryPeriodMs: 2_000,
        releaseOnShutdown: false,
        onLost: 'reject',
      },
      metricsServer: { port: 8080, address: '0.0.0.0', path: '/m' },
    });
    expect(resolveOptions({ ...base(), leaderElection: false }).leaderElection.enabled).toBe(false);
  });

  it.each([
    [{ metricsServer: { path: 'metrics' } }, 'metricsServer.path must start with "/"'],
    [{ metricsServer: { path: '/healthz' } }, 'metricsServer.path must not be /healthz or /readyz'],
    [{ metricsServer: { port: -1 } }, 'metricsServer.port must be an integer in [0, 65535]'],
    [{ metricsServer: 8080 as never }, 'metricsServer must be an object'],
    [
      { leaderElection: { onLost: 'exit' as never } },
      'leaderElection.onLost must be one of campaign, reject',
    ],
    [{ leaderElection: 'yes' as never }, 'leaderElection must be a boolean or an object'],
  ] satisfies [Partial<ProvisionControllerOptions>, string][])(
    'names the option with its group in a problem: %j',
    (bad, message) => {
      expect(() => resolveOptions({ ...base(), ...bad })).toThrow(message);
    },
  );

  it('saves PVs with the queue store by default, as the CLIs do', async () => {
    const controller = new ProvisionController(base());
    expect(await controller.registry.metrics()).toContain('workqueue_depth{name="unsavedpvs"}');
    const blocking = new ProvisionController({ ...base(), pvSave: { strategy: 'blocking' } });
    expect(await blocking.registry.metrics()).not.toContain('unsavedpvs');
  });

  it('resolves pvSave, the defaults filling the settings left out', () => {
    const limiter = new ItemExponentialFailureRateLimiter(1, 1);
    const pvSave = (options: Partial<ProvisionControllerOptions>) =>
      resolveOptions({ ...base(), ...options }).pvSave;
    expect(pvSave({ pvSave: { strategy: 'blocking' } })).toEqual({
      strategy: 'blocking',
      backoff: { steps: 5, initial: 10_000, factor: 1 },
    });
    expect(pvSave({ pvSave: { strategy: 'blocking', backoff: { steps: 2, initial: 7 } } })).toEqual({
      strategy: 'blocking',
      backoff: { steps: 2, initial: 7, factor: 1 },
    });
    expect(pvSave({ pvSave: { strategy: 'queue', limiter, workers: 2 } })).toEqual({
      strategy: 'queue',
      limiter,
      workers: 2,
    });
    expect(pvSave({ pvSave: { strategy: 'queue' } })).toMatchObject({ strategy: 'queue', workers: 4 });
  });

  it.each([
    [{ pvSave: { strategy: 'later' } as never }, 'pvSave.strategy must be one of queue, blocking'],
    [
      { pvSave: { strategy: 'queue', workers: 0 } },
      'pvSave.workers must be an integer in [1, 9007199254740991], got 0',
    ],
    [{ pvSave: { strategy: 'queue', limiter: {} as never } }, 'pvSave.limiter must be a RateLimiter'],
    [
      { pvSave: { strategy: 'blocking', backoff: { steps: 0, initial: 1 } } },
      'pvSave.backoff needs integer steps >= 1, initial >= 0, factor >= 1, jitter >= 0',
    ],
  ] satisfies [Partial<ProvisionControllerOptions>, string][])('rejects a bad pvSave: %j', (bad, message) => {
    expect(() => resolveOptions({ ...base(), ...bad })).toThrow(message);
  });

  it.each([
    [{ provisionerName: '' }, 'provisionerName must be a non-empty string'],
    [{ resyncPeriodMs: -1 }, 'resyncPeriodMs must be a finite number of milliseconds >= 0'],
    [{ rescheduleMode: 'put' as never }, 'rescheduleMode must be one of merge-patch, update'],
    [{ metricsServer: { port: 70_000 } }, 'metricsServer.port must be an integer in [0, 65535]'],
    [
      { leaderElection: { leaseDurationMs: 10_000, renewDeadlineMs: 10_000 } },
      'leaseDurationMs (10000) must be greater than renewDeadlineMs (10000)',
    ],
    [
      { leaderElection: { renewDeadlineMs: 2_000 } },
      'renewDeadlineMs (2000) must be greater than 1.2 × retryPeriodMs (2000)',
    ],
    [{ eventRateLimit: { qps: 0, burst: 10 } }, 'eventRateLimit needs qps > 0 and burst >= 1'],
    [{ eventRateLimit: { qps: 5, burst: 0 } }, 'eventRateLimit needs qps > 0 and burst >= 1'],
  ])('a bad option throws a ConfigurationError at construction: %j', (bad, message) => {
    expect(() => new ProvisionController({ ...base(), ...bad })).toThrow(ConfigurationError);
    expect(() => new ProvisionController({ ...base(), ...bad })).toThrow(message);
  });

  it.each([[{ threadiness: 0 }], [{ leaderElection: { leaseDurationMs: 10_000, renewDeadlineMs: 10_000 } }]])(
    'leaves an injected claims informer untouched when the options are rejected: %j',
    (bad) => {
      const options = base();
      const claimsInformer = new SharedInformer(options.api.resource(resources.persistentVolumeClaims));
      expect(() => new ProvisionController({ ...options, ...bad, claimsInformer })).toThrow(
        ConfigurationError,
      );
      expect(() => claimsInformer.store.byIndex(uidIndex, '')).toThrow();

      new ProvisionController({ ...options, claimsInformer });
      expect(claimsInformer.store.byIndex(uidIndex, '')).toEqual([]);
    },
  );

  it('finds the election namespace in POD_NAMESPACE, then the service account, then default', () => {
    const file = () => ' from-file \n';
    const missing = () => {
      throw new Error('ENOENT');
    };
    expect(inClusterNamespace({ POD_NAMESPACE: 'pod-ns' }, file)).toBe('pod-ns');
    expect(inClusterNamespace({}, file)).toBe('from-file');
    expect(inClusterNamespace({}, missing)).toBe('default');
  });

  it('names the Lease after the provisioner with "/" replaced', () => {
    expect(new ProvisionController(base()).lease).toBe('kube-system/example.com-hostpath');
  });

  it('gives every controller a fresh <hostname>_<uuid> identity', () => {
    const [a, b] = [new ProvisionController(base()), new ProvisionController(base())];
    expect(a.identity).toMatch(/_[0-9a-f-]{36}$/);
    expect(a.identity).not.toBe(b.identity);
  });
});

describe('controller metrics', () => {
  it('registers the six collectors with the exact Go names, labels, help and buckets', async () => {
    const registry = new Registry();
    const metrics = createControllerMetrics(registry);
    metrics.provisionDurationSeconds.observe({ class: 'c', source: '' }, 0.2);
    const text = await registry.metrics();
    expect(text).toContain(
      '# HELP controller_persistentvolumeclaim_provision_total Total number of persistent volumes provisioned successfully. Broken down by storage class name and source of the claim.',
    );
    expect(text).toContain(
      '# HELP controller_persistentvolume_delete_total Total number of persistent volumes deleted successfully. Broken down by storage class name.',
    );
    expect(text).toContain(
      '# HELP controller_persistentvolumeclaim_provision_duration_seconds Latency in seconds to provision persistent volumes. Failed provisioning attempts are ignored. Broken down by storage class name and source of the claim.',
    );
    expect(text).toContain(
      '# HELP controller_persistentvolume_delete_duration_seconds Latency in seconds to delete persistent volumes. Failed deletion attempts are ignored. Broken down by storage class name.',
    );
    const buckets = [...text.matchAll(/provision_duration_seconds_bucket\{le="([^"]+)"/g)].map((m) => m[1]);
    expect(buckets).toEqual([
      '0.005',
      '0.01',
      '0.025',
      '0.05',
      '0.1',
      '0.25',
      '0.5',
      '1',
      '2.5',
      '5',
      '10',
      '+Inf',
    ]);
    expect(
      registry
        .getMetricsAsArray()
        .map((m) => m.name)
        .sort(),
    ).toEqual([
      'controller_persistentvolume_delete_duration_seconds',
      'controller_persistentvolume_delete_failed_total',
      'controller_persistentvolume_delete_total',
      'controller_persistentvolumeclaim_provision_duration_seconds',
      'controller_persistentvolumeclaim_provision_failed_total',
      'controller_persistentvolumeclaim_provision_total',
    ]);
  });

  it('two controllers in one process do not collide (private registries)', () => {
    expect(() => [new ProvisionController(base()), new ProvisionController(base())]).not.toThrow();
  });

  it('two controllers on one host registry share the collectors and add up', async () => {
    const registry = new Registry();
    const a = createControllerMetrics(registry);
    const b = createControllerMetrics(registry);
    a.provisionTotal.inc({ class: 'c', source: '' });
    b.provisionTotal.inc({ class: 'c', source: '' });
    const text = await registry.metrics();
    expect(text).toMatch(/^controller_persistentvolumeclaim_provision_total\{class="c",source=""\} 2$/m);
    expect(() => [
      new ProvisionController({ ...base(), metricsRegistry: registry }),
      new ProvisionController({ ...base(), metricsRegistry: registry }),
    ]).not.toThrow();
  });

  it('refuses a host registry holding a collector of the same name but another type', () => {
    const registry = new Registry();
    new Gauge({ name: 'controller_persistentvolume_delete_total', help: 'other', registers: [registry] });
    expect(() => new ProvisionController({ ...base(), metricsRegistry: registry })).toThrow(
      'metricsRegistry already has a collector "controller_persistentvolume_delete_total" of another type',
    );
  });
});
