/**
 * A Lease the ServiceAccount may not use (upstream's Role has no Lease rules) fails readiness and is
 * logged at error level once per minute, naming the verb, the resource and the rule that grants it;
 * the controller never provisions without the Lease.
 */
import { describe, expect, it } from 'vitest';
import { statusError } from '../src/testing/status-error.ts';
import { createLogger } from '../src/util/logger.ts';
import { manualHarness, newClaim, newStorageClass, provisionerName, pump } from './controller-fixtures.ts';

describe('a forbidden Lease', () => {
  it('fails readiness with the missing verb and rule, logs it once per minute, and provisions nothing', async () => {
    const lines: { level: string; msg: string; verb?: string }[] = [];
    const { clock, api, harness } = manualHarness({
      objects: [
        newStorageClass('class-1', provisionerName),
        newClaim('claim-1', 'uid-1-1', 'class-1', provisionerName),
      ],
      leaderElection: { namespace: 'kube-system' },
      logger: createLogger({ level: 'info', write: (line) => void lines.push(JSON.parse(line)) }),
    });
    const remove = api.prependReactor({ resource: 'leases', verb: 'get' }, () => {
      throw statusError('Forbidden', 'leases.coordination.k8s.io "foo.bar-baz" is forbidden');
    });
    const checks: (() => unknown)[] = [];
    harness.controller.registerChecks({
      addHealthCheck: () => {},
      addReadinessCheck: (_name, check) => void checks.push(check),
    });
    const readiness = async (): Promise<string> => {
      try {
        await checks[0]?.();
        return 'ok';
      } catch (err) {
        return (err as Error).message;
      }
    };
    harness.start();
    await pump(clock, 130_000, 500);

    expect(await readiness()).toBe(
      'forbidden to get leases.coordination.k8s.io "foo.bar-baz" in namespace "kube-system": grant the ' +
        "provisioner's ServiceAccount a Role in that namespace with the rule " +
        '{ apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["get", "create", "update"] }',
    );
    const denials = lines.filter((line) => line.level === 'error' && line.verb === 'get');
    // At 0 s, 60 s and 120 s: once per minute although the candidate retries every few seconds.
    expect(denials).toHaveLength(3);
    expect(harness.volumes()).toEqual([]);

    remove();
    await pump(clock, 5_000);
    expect(await readiness()).toBe('ok');
    await pump(clock, 2_000);
    expect(harness.volumes().map((pv) => pv.metadata?.name)).toEqual(['pvc-uid-1-1']);
    const stopped = harness.stop();
    await pump(clock, 2_000);
    await stopped;
  });
});
