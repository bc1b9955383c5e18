import { describe, expect, it } from 'vitest';
import { abandonedRetryDelayMs, processWorkItem } from '../src/internal/work-item.ts';
import { LeadershipLapsedError } from '../src/leader-election/lease-fence.ts';
import { ManualClock } from '../src/testing/manual-clock.ts';
import { createLogger } from '../src/util/logger.ts';
import { RateLimitingQueue } from '../src/workqueue/rate-limiting-queue.ts';

/** A queue and the config of items that fail their fence check while `lapsed` is true. */
function lapsedTerm() {
  const clock = new ManualClock();
  const queue = new RateLimitingQueue({ clock });
  const state = { lapsed: true, syncs: 0 };
  const fence = {
    assertLeader: () => {
      if (state.lapsed) throw new LeadershipLapsedError('renewal overdue');
    },
    abandoned: () => state.lapsed,
  };
  const config = {
    kind: 'claim',
    queue,
    threshold: 15,
    timeoutMs: 0,
    clock,
    logger: createLogger({ level: 'silent' }),
    signal: new AbortController().signal,
    fence,
    sync: async (_key: string, context: { assertLeader(): void }) => {
      state.syncs++;
      context.assertLeader();
    },
  };
  return { clock, queue, state, config };
}

describe('an item abandoned while the term has lapsed', () => {
  it('waits before it is tried again instead of coming straight back to the workers', async () => {
    const { clock, queue, state, config } = lapsedTerm();
    await processWorkItem(config, 'uid-1');

    expect(state.syncs).toBe(1);
    expect(queue.len()).toBe(0);
    clock.advance(abandonedRetryDelayMs - 1);
    expect(queue.len()).toBe(0);
    clock.advance(1);
    expect(queue.len()).toBe(1);
  });

  it('counts no failure and is processed once the term is back', async () => {
    const { clock, queue, state, config } = lapsedTerm();
    await processWorkItem(config, 'uid-1');
    state.lapsed = false;
    clock.advance(abandonedRetryDelayMs);

    const { item } = await queue.get();
    expect(item).toBe('uid-1');
    await processWorkItem(config, 'uid-1');
    queue.done('uid-1');
    expect(state.syncs).toBe(2);
    expect(queue.numRequeues('uid-1')).toBe(0);
    expect(queue.len()).toBe(0);
  });
});
