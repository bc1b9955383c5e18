/**
 * `Provisioner.maintain`: periodic backend work (archive expiry) run by the leader only, after the
 * caches synced, on a schedule that a failure does not break, fenced like every operation.
 */
import { describe, expect, it } from 'vitest';
import { resources } from '../src/client/resource-client.ts';
import type { OperationContext } from '../src/provisioner.ts';
import { type ManualClock, pump, RecordingProvisioner, settle } from '../src/testing/index.ts';
import { createLogger } from '../src/util/logger.ts';
import { eventually, manualHarness } from './controller-fixtures.ts';

/** A logger keeping its lines, parsed. */
function capturedLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger({
    level: 'debug',
    write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>),
  });
  return { logger, lines };
}

const minute = 60_000;

/** Stops a harness on the manual clock: the graceful stop's timers need the clock to move. */
async function stopped(harness: { stop(): Promise<void> }, clock: ManualClock): Promise<void> {
  const done = harness.stop();
  await pump(clock, 2_000);
  await done;
}

/** A provisioner whose `maintain` records each call and does what `step` says. */
class MaintainedProvisioner extends RecordingProvisioner {
  readonly maintainCalls: OperationContext[] = [];
  step: (context: OperationContext) => Promise<void> = async () => {};

  async maintain(context: OperationContext): Promise<void> {
    this.maintainCalls.push(context);
    await this.step(context);
  }
}

describe('Provisioner.maintain', () => {
  it('runs once the caches synced, then every maintenanceIntervalMs after the previous call', async () => {
    const provisioner = new MaintainedProvisioner();
    const { clock, harness } = manualHarness({ provisioner, maintenanceIntervalMs: 5 * minute });
    harness.start();

    await eventually(() => expect(provisioner.maintainCalls).toHaveLength(1), { clock, stepMs: 100 });
    await pump(clock, 5 * minute - 1000, 1000);
    expect(provisioner.maintainCalls).toHaveLength(1);
    await pump(clock, 1000, 1000);
    await eventually(() => expect(provisioner.maintainCalls).toHaveLength(2));
    await stopped(harness, clock);
  });

  it('aborts the signal it gave maintain once the term ends, also after a graceful stop', async () => {
    const provisioner = new MaintainedProvisioner();
    const { clock, harness } = manualHarness({ provisioner, maintenanceIntervalMs: 5 * minute });
    harness.start();
    await eventually(() => expect(provisioner.maintainCalls).toHaveLength(1), { clock, stepMs: 100 });
    // Background work started by maintain (a polling loop) holds this signal and must end with the term.
    const [first] = provisioner.maintainCalls;
    expect(first?.signal.aborted).toBe(false);

    await stopped(harness, clock);
    expect(first?.signal.aborted).toBe(true);
  });

  it('logs a failure and keeps the schedule', async () => {
    const provisioner = new MaintainedProvisioner();
    provisioner.step = async () => {
      throw new Error('export unreachable');
    };
    const { logger, lines } = capturedLogger();
    const { clock, harness } = manualHarness({ provisioner, maintenanceIntervalMs: minute, logger });
    harness.start();

    await eventually(() => expect(provisioner.maintainCalls).toHaveLength(1), { clock, stepMs: 100 });
    await eventually(() =>
      expect(lines.find((line) => String(line.msg).startsWith('Maintenance failed'))).toMatchObject({
        level: 'error',
        err: { message: 'export unreachable' },
      }),
    );
    await pump(clock, minute, 1000);
    await eventually(() => expect(provisioner.maintainCalls).toHaveLength(2));
    await stopped(harness, clock);
  });

  it('is called only by the replica holding the Lease, from when it acquires it', async () => {
    const provisioner = new MaintainedProvisioner();
    const { logger, lines } = capturedLogger();
    const { clock, api, harness } = manualHarness({
      provisioner,
      logger,
      leaderElection: { namespace: 'kube-system' },
    });
    const leaseName = harness.controller.lease.split('/')[1] ?? '';
    const now = new Date(clock.now());
    api.seed(resources.leases, {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: leaseName, namespace: 'kube-system' },
      spec: { holderIdentity: 'someone-else', leaseDurationSeconds: 3600, acquireTime: now, renewTime: now },
    });
    harness.start();

    await pump(clock, 20 * minute, 1000);
    expect(provisioner.maintainCalls).toEqual([]);
    expect(lines.some((line) => line.msg === 'Started provisioner controller')).toBe(false);

    // The other holder goes away; this replica acquires the Lease and maintains from then on.
    await api.resource(resources.leases).delete(leaseName, { namespace: 'kube-system' });
    await eventually(() => expect(provisioner.maintainCalls).toHaveLength(1), { clock, stepMs: 500 });
    await settle();
    await stopped(harness, clock);
  });
});
