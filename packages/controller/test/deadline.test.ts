import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { withDeadline } from '../src/internal/deadline.ts';
import { ManualClock } from '../src/testing/manual-clock.ts';

/** Resolves with the signal's reason once it aborts. */
const reasonOf = (signal: AbortSignal): Promise<unknown> =>
  new Promise((resolve) => signal.addEventListener('abort', () => resolve(signal.reason), { once: true }));

describe('withDeadline', () => {
  it('aborts with a TimeoutError once the deadline passes on the clock', async () => {
    const clock = new ManualClock();
    const result = withDeadline(clock, 1_000, undefined, async (signal) => {
      const reason = reasonOf(signal);
      clock.advance(999);
      expect(signal.aborted).toBe(false);
      clock.advance(1);
      return reason;
    });
    await expect(result).resolves.toMatchObject({ name: 'TimeoutError' });
  });

  it('aborts with the parent’s own reason when the parent aborts first', async () => {
    const clock = new ManualClock();
    const parent = new AbortController();
    const reason = new Error('stop requested');
    const result = withDeadline(clock, 1_000, parent.signal, async (signal) => {
      const aborted = reasonOf(signal);
      parent.abort(reason);
      return aborted;
    });
    await expect(result).resolves.toBe(reason);
  });

  it('starts aborted under an already aborted parent', async () => {
    const parent = new AbortController();
    parent.abort(new Error('gone'));
    const aborted = await withDeadline(
      new ManualClock(),
      1_000,
      parent.signal,
      async (signal) => signal.aborted,
    );
    expect(aborted).toBe(true);
  });

  it('leaves neither a timer nor a listener on the parent once the call settles, however it ends', async () => {
    const clock = new ManualClock();
    const parent = new AbortController();
    await withDeadline(clock, 1_000, parent.signal, async () => 'done');
    await expect(
      withDeadline(clock, 1_000, parent.signal, async () => {
        throw new Error('failed');
      }),
    ).rejects.toThrow('failed');
    expect(getEventListeners(parent.signal, 'abort')).toHaveLength(0);
    expect(clock.pendingTimers()).toBe(0);
  });
});
