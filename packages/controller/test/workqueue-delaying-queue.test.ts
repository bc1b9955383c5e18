import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DelayingQueue } from '../src/workqueue/delaying-queue.ts';

/** Items queued now, in order, taken and marked done. */
async function drainQueued(queue: DelayingQueue): Promise<string[]> {
  const items: string[] = [];
  while (queue.len() > 0) {
    const next = await queue.get();
    if (next.shutdown) break;
    items.push(next.item);
    queue.done(next.item);
  }
  return items;
}

describe('DelayingQueue', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 0 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('adds an item once its delay has passed, not before', () => {
    const queue = new DelayingQueue();
    queue.addAfter('a', 1000);
    vi.advanceTimersByTime(999);
    expect(queue.len()).toBe(0);
    vi.advanceTimersByTime(1);
    expect(queue.len()).toBe(1);
  });

  it('adds at once for a delay of zero or less', () => {
    const queue = new DelayingQueue();
    queue.addAfter('a', 0);
    queue.addAfter('b', -5);
    expect(queue.len()).toBe(2);
  });

  it('keeps the earlier ready time when an item is scheduled again', async () => {
    const queue = new DelayingQueue();
    queue.addAfter('a', 10_000);
    queue.addAfter('a', 1000);
    vi.advanceTimersByTime(1000);
    expect(await drainQueued(queue)).toEqual(['a']);

    queue.addAfter('b', 1000);
    queue.addAfter('b', 10_000);
    vi.advanceTimersByTime(1000);
    expect(await drainQueued(queue)).toEqual(['b']);
    vi.advanceTimersByTime(20_000);
    expect(queue.len()).toBe(0);
  });

  it('releases items in ready-time order, ties in scheduling order', async () => {
    const queue = new DelayingQueue();
    queue.addAfter('late', 300);
    queue.addAfter('tie-1', 200);
    queue.addAfter('early', 100);
    queue.addAfter('tie-2', 200);
    vi.advanceTimersByTime(300);
    expect(await drainQueued(queue)).toEqual(['early', 'tie-1', 'tie-2', 'late']);
  });

  it('orders many items with random delays by ready time', async () => {
    const queue = new DelayingQueue();
    let seed = 42;
    const random = (): number => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const delays = new Map<string, number>();
    for (let i = 0; i < 200; i++) {
      const item = `item-${i % 150}`;
      const delay = 1 + Math.floor(random() * 5000);
      delays.set(item, Math.min(delay, delays.get(item) ?? Number.POSITIVE_INFINITY));
      queue.addAfter(item, delay);
    }
    vi.advanceTimersByTime(5000);
    const released = await drainQueued(queue);
    expect(released).toHaveLength(delays.size);
    const readyTimes = released.map((item) => delays.get(item));
    expect(readyTimes).toEqual([...readyTimes].sort((a = 0, b = 0) => a - b));
  });

  it('measures delays on the monotonic clock: a wall-clock step neither releases nor holds back items', () => {
    const queue = new DelayingQueue();
    queue.addAfter('a', 60_000);
    queue.addAfter('b', 20_000);
    vi.setSystemTime(120_000);
    vi.advanceTimersByTime(10_000);
    expect(queue.len()).toBe(0);
    vi.setSystemTime(-100_000);
    vi.advanceTimersByTime(10_000);
    expect(queue.len()).toBe(1);
    vi.advanceTimersByTime(40_000);
    expect(queue.len()).toBe(2);
  });

  it('keeps no timer while nothing waits', () => {
    const queue = new DelayingQueue();
    expect(vi.getTimerCount()).toBe(0);
    queue.addAfter('a', 500);
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(500);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('ignores addAfter after shutdown and drops items still waiting', async () => {
    const queue = new DelayingQueue();
    queue.addAfter('a', 1000);
    queue.shutDown();
    queue.addAfter('b', 0);
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(1000);
    expect(await queue.get()).toEqual({ shutdown: true });
  });

  it('drops items still waiting when shut down with drain', async () => {
    const queue = new DelayingQueue();
    queue.addAfter('a', 1000);
    await queue.shutDownWithDrain();
    vi.advanceTimersByTime(1000);
    expect(queue.len()).toBe(0);
  });
});
