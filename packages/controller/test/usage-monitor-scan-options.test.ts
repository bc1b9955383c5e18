/**
 * Walks the usage monitor does not publish (an archive, say) run under its rules: its I/O budget,
 * which they share with the volumes' scans, its scan timeout, and the caller's stop signal.
 */
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { UsageMonitor } from '../src/usage/index.ts';

function monitor(operationsPerSecond: number, scanTimeoutMs = 60_000): UsageMonitor {
  return new UsageMonitor({
    registry: new Registry(),
    measure: async () => undefined,
    operationsPerSecond,
    scanTimeoutMs,
    onExceeded: () => {},
  });
}

describe('UsageMonitor.scanOptions', () => {
  it('paces a walk by the shared budget: one slot per tenth of a second at 10 calls a second', async () => {
    const usage = monitor(10);
    const stop = new AbortController();
    const [first, second] = [usage.scanOptions(stop.signal), usage.scanOptions(stop.signal)];
    const start = performance.now();

    await Promise.all([first.pace(), second.pace(), first.pace()]);

    expect(performance.now() - start).toBeGreaterThanOrEqual(190);
  });

  it('aborts a walk when its caller stops, and after the scan timeout', async () => {
    const usage = monitor(10, 20);
    const stop = new AbortController();
    const stopped = usage.scanOptions(stop.signal);
    const timed = usage.scanOptions(new AbortController().signal);

    stop.abort(new Error('term ended'));

    expect(stopped.signal.reason).toEqual(new Error('term ended'));
    await new Promise((resolve) => timed.signal.addEventListener('abort', resolve, { once: true }));
    expect((timed.signal.reason as Error).name).toBe('TimeoutError');
  });
});
