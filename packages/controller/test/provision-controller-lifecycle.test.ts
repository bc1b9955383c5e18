import { describe, expect, it } from 'vitest';
import { resources } from '../src/client/resource-client.ts';
import { isLeaderElectionLostError } from '../src/leader-election-lost-error.ts';
import {
  type HarnessOptions,
  manualHarness,
  newClaim,
  newStorageClass,
  processedItems,
  provisionCounts,
  provisionerName,
  pump,
} from './controller-fixtures.ts';

const objects = [
  newStorageClass('class-1', provisionerName),
  newClaim('claim-1', 'uid-1-1', 'class-1', provisionerName),
];

const manual = (options: HarnessOptions = {}): ReturnType<typeof manualHarness> =>
  manualHarness({ objects, ...options });

describe('ProvisionController lifecycle', () => {
  it('gives up on a claim after failedProvisionThreshold requeues', async () => {
    const { clock, harness } = manual({ failedProvisionThreshold: 2 });
    harness.provisioner.provisionResult = () => ({ error: new Error('always'), state: 'Finished' });
    harness.start();
    // Retries after 15 s and 30 s; the third failure gives up.
    await pump(clock, 120_000, 1000);
    expect(harness.provisioner.provisionCalls).toHaveLength(3);
    expect(await provisionCounts(harness.registry, 'class-1')).toEqual({ success: 0, failed: 3 });
    await harness.stop();
  });

  it('aborts a provision that exceeds provisionTimeoutMs and requeues the claim', async () => {
    const { clock, harness } = manual({ provisionTimeoutMs: 5_000 });
    let aborted: unknown;
    harness.provisioner.provision = async (options, context) => {
      harness.provisioner.provisionCalls.push(options);
      await new Promise((resolve) => context.signal.addEventListener('abort', resolve, { once: true }));
      aborted = context.signal.reason;
      throw context.signal.reason;
    };
    harness.start();
    await pump(clock, 6_000);
    expect((aborted as Error).name).toBe('TimeoutError');
    expect(await provisionCounts(harness.registry, 'class-1')).toEqual({ success: 0, failed: 1 });
    await harness.stop();
  });

  it('lets an in-flight provision finish before run settles', async () => {
    const { clock, harness } = manual();
    let release: () => void = () => {};
    harness.provisioner.provisionResult = async (options) => {
      await new Promise<void>((resolve) => {
        release = resolve;
      });
      return { pv: { metadata: { name: options.pvName }, spec: {} } };
    };
    harness.start();
    await pump(clock, 1_000);
    expect(harness.provisioner.provisionCalls).toHaveLength(1);
    const stopped = harness.stop();
    release();
    await stopped;
    expect(harness.volumes().map((pv) => pv.metadata?.name)).toEqual(['pvc-uid-1-1']);
    expect(await processedItems(harness.registry, 'claims')).toBe(1);
  });

  it('leads through a Lease, provisions, and releases the Lease on graceful stop', async () => {
    const { clock, api, harness } = manual({
      leaderElection: { namespace: 'kube-system', onLost: 'reject' },
    });
    harness.start();
    await pump(clock, 2_000);
    const lease = api.objects(resources.leases, 'kube-system')[0];
    expect(lease?.metadata?.name).toBe('foo.bar-baz');
    expect(lease?.spec?.holderIdentity).toBe(harness.controller.identity);
    expect(harness.volumes().map((pv) => pv.metadata?.name)).toEqual(['pvc-uid-1-1']);
    const stopped = harness.stop();
    await pump(clock, 1_000);
    await stopped;
    expect(api.objects(resources.leases, 'kube-system')[0]?.spec?.holderIdentity ?? '').toBe('');
  });

  it('rejects run with LeaderElectionLostError when the Lease cannot be renewed', async () => {
    const { clock, api, harness } = manual({
      leaderElection: { namespace: 'kube-system', onLost: 'reject' },
    });
    const run = harness.controller.run(new AbortController().signal);
    const outcome = run.then(
      () => 'resolved',
      (err: unknown) => err,
    );
    await pump(clock, 2_000);
    api.prependReactor({ resource: 'leases', verb: 'update' }, () => {
      throw new Error('api down');
    });
    api.prependReactor({ resource: 'leases', verb: 'get' }, () => {
      throw new Error('api down');
    });
    await pump(clock, 20_000, 500);
    expect(isLeaderElectionLostError(await outcome)).toBe(true);
  });

  it('aborts in-flight operations as soon as the Lease is lost, without the graceful grace period', async () => {
    const { clock, api, harness } = manual({
      leaderElection: { namespace: 'kube-system', onLost: 'reject' },
    });
    let abortedAt: number | undefined;
    harness.provisioner.provision = async (options, context) => {
      harness.provisioner.provisionCalls.push(options);
      await new Promise((resolve) => context.signal.addEventListener('abort', resolve, { once: true }));
      abortedAt = clock.now();
      throw context.signal.reason;
    };
    let settled: unknown;
    void harness.controller.run(new AbortController().signal).catch((err: unknown) => {
      settled = err;
    });
    await pump(clock, 2_000);
    expect(harness.provisioner.provisionCalls).toHaveLength(1);
    const apiDownAt = clock.now();
    for (const verb of ['get', 'update'] as const) {
      api.prependReactor({ resource: 'leases', verb }, () => {
        throw new Error('api down');
      });
    }
    // The fence closes renewDeadline (10 s) after the last successful renewal was sent, which was at
    // most one retry period (2 s) before the API went down; shutdownTimeoutMs is 30 s.
    await pump(clock, 15_000, 500);
    expect(isLeaderElectionLostError(settled)).toBe(true);
    // Not before renewDeadline has passed without a renewal, and at once when it has.
    expect(abortedAt).toBeGreaterThanOrEqual(apiDownAt + 8_000);
    expect(abortedAt).toBeLessThanOrEqual(apiDownAt + 10_500);
  });
});
