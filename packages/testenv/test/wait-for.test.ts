import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { stopWaiting, waitFor } from '../src/wait-for.ts';

describe('waitFor', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('resolves with the first truthy answer', async () => {
    let calls = 0;
    const result = waitFor(() => (++calls >= 3 ? 'ready' : false), { timeoutMs: 10_000, description: 'x' });
    await vi.advanceTimersByTimeAsync(1000);
    await expect(result).resolves.toBe('ready');
    expect(calls).toBe(3);
  });

  it('times out naming what it waited for and the last error', async () => {
    const result = waitFor(
      () => {
        throw new Error('connection refused');
      },
      { timeoutMs: 1000, description: 'etcd to become ready' },
    );
    const assertion = expect(result).rejects.toThrow(
      'timed out after 1000ms waiting for etcd to become ready: connection refused',
    );
    await vi.advanceTimersByTimeAsync(1500);
    await assertion;
  });

  it('gives up at once on a fatal error', async () => {
    const result = waitFor(
      () => {
        throw stopWaiting(new Error('etcd exited during start-up'));
      },
      { timeoutMs: 60_000, description: 'etcd' },
    );
    await expect(result).rejects.toThrow('etcd exited during start-up');
  });
});
