import type { CoreV1Event } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { EventCorrelator } from '../src/events/event-correlator.ts';
import { EventNamer } from '../src/events/event-name.ts';
import { LruCache } from '../src/events/lru.ts';
import { ManualClock } from '../src/testing/manual-clock.ts';

const start = Date.UTC(2025, 0, 1);

function event(
  message: string,
  overrides: { name?: string; reason?: string; type?: string; at?: number } = {},
): CoreV1Event {
  const name = overrides.name ?? 'claim-1';
  const at = new Date(overrides.at ?? start);
  return {
    metadata: { name: `${name}.${Math.random().toString(16).slice(2)}`, namespace: 'ns' },
    involvedObject: {
      kind: 'PersistentVolumeClaim',
      apiVersion: 'v1',
      namespace: 'ns',
      name,
      uid: `uid-${name}`,
    },
    reason: overrides.reason ?? 'ProvisioningFailed',
    message,
    type: overrides.type ?? 'Warning',
    count: 1,
    firstTimestamp: at,
    lastTimestamp: at,
    source: { component: 'example.com/hostpath_node_1' },
    reportingComponent: 'example.com/hostpath_node_1',
    reportingInstance: '',
  };
}

describe('EventCorrelator dedupe', () => {
  it('passes a first event through unchanged, to be created', () => {
    const correlator = new EventCorrelator({ clock: new ManualClock(start) });
    const input = event('boom');
    const result = correlator.correlate(input);
    expect(result?.event).toEqual(input);
    expect(result?.patch).toBeUndefined();
  });

  it('turns a repeat into a count bump on the first event: same name and firstTimestamp, new lastTimestamp', () => {
    const clock = new ManualClock(start);
    const correlator = new EventCorrelator({ clock });
    const first = event('boom');
    correlator.correlate(first);
    clock.advance(42_500);
    const second = correlator.correlate(event('boom', { at: clock.now() }));

    expect(second?.event.metadata.name).toBe(first.metadata.name);
    expect(second?.event.count).toBe(2);
    expect(second?.event.firstTimestamp).toEqual(new Date(start));
    expect(second?.patch).toEqual({ count: 2, lastTimestamp: '2025-01-01T00:00:42Z', message: 'boom' });
    expect(correlator.correlate(event('boom'))?.patch?.count).toBe(3);
  });

  it('patches the object the server answered with', () => {
    const correlator = new EventCorrelator({ clock: new ManualClock(start) });
    const first = correlator.correlate(event('boom'));
    if (!first) throw new Error('first event dropped');
    correlator.observeWritten(first.key, {
      ...first.event,
      metadata: { ...first.event.metadata, name: 'server-name', resourceVersion: '77' },
    });
    const repeat = correlator.correlate(event('boom'));
    expect(repeat?.event.metadata).toMatchObject({ name: 'server-name', resourceVersion: '77' });
    expect(repeat?.patch?.count).toBe(2);
  });

  it('keeps different messages, reasons, types and objects apart', () => {
    const correlator = new EventCorrelator({ clock: new ManualClock(start) });
    correlator.correlate(event('boom'));
    expect(correlator.correlate(event('bang'))?.patch).toBeUndefined();
    expect(correlator.correlate(event('boom', { reason: 'Other' }))?.patch).toBeUndefined();
    expect(correlator.correlate(event('boom', { type: 'Normal' }))?.patch).toBeUndefined();
    expect(correlator.correlate(event('boom', { name: 'claim-2' }))?.patch).toBeUndefined();
  });
});

describe('EventCorrelator aggregation', () => {
  it('replaces the 10th distinct message within 600 s by one "(combined from similar events)" event that later ones bump', () => {
    const clock = new ManualClock(start);
    const correlator = new EventCorrelator({ clock, namer: new EventNamer() });
    for (let i = 1; i <= 9; i++) {
      const result = correlator.correlate(event(`error ${i}`));
      expect(result?.event.message).toBe(`error ${i}`);
      clock.advance(1_000);
    }
    const aggregate = correlator.correlate(event('error 10'));
    expect(aggregate?.patch).toBeUndefined();
    expect(aggregate?.event).toMatchObject({
      message: '(combined from similar events): error 10',
      count: 1,
      reason: 'ProvisioningFailed',
      type: 'Warning',
      metadata: { namespace: 'ns' },
      involvedObject: { name: 'claim-1', uid: 'uid-claim-1' },
      firstTimestamp: new Date(clock.now()),
    });
    expect(aggregate?.event.metadata.name).toBe(`claim-1.${(BigInt(clock.now()) * 1_000_000n).toString(16)}`);

    clock.advance(1_000);
    const next = correlator.correlate(event('error 11'));
    expect(next?.event.metadata.name).toBe(aggregate?.event.metadata.name);
    expect(next?.patch).toMatchObject({ count: 2, message: '(combined from similar events): error 11' });
  });

  it('starts over when more than 600 s passed since the last similar event', () => {
    const clock = new ManualClock(start);
    const correlator = new EventCorrelator({ clock });
    for (let i = 1; i <= 9; i++) correlator.correlate(event(`error ${i}`));
    clock.advance(600_001);
    expect(correlator.correlate(event('error 10'))?.event.message).toBe('error 10');
  });

  it('does not aggregate across involved objects', () => {
    const correlator = new EventCorrelator({ clock: new ManualClock(start) });
    for (let i = 1; i <= 9; i++) correlator.correlate(event(`error ${i}`));
    expect(correlator.correlate(event('error 10', { name: 'claim-2' }))?.event.message).toBe('error 10');
  });
});

describe('EventCorrelator spam filter', () => {
  it('lets 25 events per source, object and type through, then one every 5 minutes', () => {
    const clock = new ManualClock(start);
    const correlator = new EventCorrelator({ clock });
    const passed = Array.from({ length: 30 }, (_, i) =>
      correlator.correlate(event('boom', { reason: `R${i % 3}` })),
    );
    expect(passed.filter(Boolean)).toHaveLength(25);

    // Other objects and other types have their own budget.
    expect(correlator.correlate(event('boom', { name: 'claim-2' }))).toBeDefined();
    expect(correlator.correlate(event('boom', { type: 'Normal' }))).toBeDefined();

    clock.advance(299_000);
    expect(correlator.correlate(event('boom', { reason: 'R0' }))).toBeUndefined();
    clock.advance(1_000);
    expect(correlator.correlate(event('boom', { reason: 'R0' }))).toBeDefined();
    expect(correlator.correlate(event('boom', { reason: 'R0' }))).toBeUndefined();
  });

  it('still counts dropped repeats, so the next written one carries the total', () => {
    const clock = new ManualClock(start);
    const correlator = new EventCorrelator({ clock });
    for (let i = 0; i < 25; i++) correlator.correlate(event('boom'));
    for (let i = 0; i < 5; i++) expect(correlator.correlate(event('boom'))).toBeUndefined();
    clock.advance(300_000);
    expect(correlator.correlate(event('boom'))?.patch?.count).toBe(31);
  });
});

describe('LruCache', () => {
  it('evicts the least recently used entry, where reads count as use', () => {
    const cache = new LruCache<string, number>(2);
    cache.set('a', 1);
    cache.set('b', 2);
    expect(cache.get('a')).toBe(1);
    cache.set('c', 3);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toBe(1);
    expect(cache.get('c')).toBe(3);
    expect(cache.size).toBe(2);
  });
});

describe('EventNamer', () => {
  it('names events <object>.<unix nanos in hex>, strictly increasing within one millisecond', () => {
    const namer = new EventNamer();
    const nanos = BigInt(start) * 1_000_000n;
    expect(namer.name('pvc-1', start)).toBe(`pvc-1.${nanos.toString(16)}`);
    expect(namer.name('pvc-1', start)).toBe(`pvc-1.${(nanos + 1n).toString(16)}`);
  });

  it('falls back to a UUID when the name would not be a DNS subdomain', () => {
    expect(new EventNamer().name('Not_Valid', start)).toMatch(/^[0-9a-f-]{36}$/);
  });
});
