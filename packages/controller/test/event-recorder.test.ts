import type { CoreV1Event } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../src/client/api-error.ts';
import { type PatchType, type ResourceClient, resources } from '../src/client/resource-client.ts';
import {
  createEventRecorder,
  dropReportIntervalMs,
  type EventRecorderOptions,
} from '../src/events/event-recorder.ts';
import { ManualClock } from '../src/testing/manual-clock.ts';
import { createLogger } from '../src/util/logger.ts';

type Call =
  | { verb: 'create'; namespace: string | undefined; event: CoreV1Event }
  | { verb: 'patch'; namespace: string | undefined; name: string; patch: unknown; type: PatchType };

/** Records writes; `answer` decides each one (default: echo back with a resourceVersion). */
class EventSink {
  calls: Call[] = [];
  answer: (call: Call, signal?: AbortSignal) => Promise<CoreV1Event> = async (call) =>
    call.verb === 'create'
      ? { ...call.event, metadata: { ...call.event.metadata, resourceVersion: String(this.calls.length) } }
      : ({ metadata: { name: call.name }, involvedObject: {} } as CoreV1Event);

  /** The messages of the events created so far, in order. */
  created(): (string | undefined)[] {
    return this.calls.flatMap((call) => (call.verb === 'create' ? [call.event.message] : []));
  }

  /**
   * Holds every write from now on until the test calls its release function: the returned array
   * fills with one per write, in the order the writes arrive.
   */
  hold(): (() => void)[] {
    const release: (() => void)[] = [];
    const answer = this.answer;
    this.answer = (call, signal) =>
      new Promise<void>((resolve) => release.push(resolve)).then(() => answer(call, signal));
    return release;
  }

  client(): ResourceClient<CoreV1Event> {
    const unsupported = (): never => {
      throw new Error('not used by the recorder');
    };
    const record = (call: Call, signal?: AbortSignal): Promise<CoreV1Event> => {
      this.calls.push(structuredClone(call));
      return this.answer(call, signal);
    };
    return {
      descriptor: resources.events,
      create: (event, options) =>
        record({ verb: 'create', namespace: options?.namespace, event }, options?.signal),
      patch: (name, patch, type, options) =>
        record({ verb: 'patch', namespace: options?.namespace, name, patch, type }, options?.signal),
      get: unsupported,
      list: unsupported,
      watch: unsupported,
      update: unsupported,
      delete: unsupported,
    };
  }
}

const claim = {
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name: 'claim-1', namespace: 'ns', uid: 'uid-1', resourceVersion: '12' },
};
const volume = { apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'pvc-uid-1', uid: 'uid-2' } };
const transportError = (): Error => new Error('socket hang up');

function recorder(sink: EventSink, options: Partial<EventRecorderOptions> = {}) {
  return createEventRecorder({ events: sink.client(), component: 'example.com/hostpath_node_1', ...options });
}

beforeEach(() => {
  vi.useFakeTimers({ now: Date.UTC(2025, 0, 1) });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('EventRecorder writing', () => {
  it('creates a core/v1 Event on the involved object, in its namespace', async () => {
    const sink = new EventSink();
    const events = recorder(sink);
    events.event(
      claim,
      'Normal',
      'Provisioning',
      'External provisioner is provisioning volume for claim "ns/claim-1"',
    );
    await events.flush();

    expect(sink.calls).toHaveLength(1);
    const call = sink.calls[0];
    expect(call?.verb).toBe('create');
    expect(call?.namespace).toBe('ns');
    const written = call?.verb === 'create' ? call.event : undefined;
    const now = new Date(Date.now());
    expect(written).toEqual({
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: `claim-1.${(BigInt(Date.now()) * 1_000_000n).toString(16)}`, namespace: 'ns' },
      involvedObject: {
        kind: 'PersistentVolumeClaim',
        apiVersion: 'v1',
        name: 'claim-1',
        namespace: 'ns',
        uid: 'uid-1',
        resourceVersion: '12',
      },
      reason: 'Provisioning',
      message: 'External provisioner is provisioning volume for claim "ns/claim-1"',
      type: 'Normal',
      count: 1,
      firstTimestamp: now,
      lastTimestamp: now,
      source: { component: 'example.com/hostpath_node_1', host: '' },
      reportingComponent: 'example.com/hostpath_node_1',
      reportingInstance: '',
    });
  });

  it('puts events about cluster-scoped objects in "default"', async () => {
    const sink = new EventSink();
    const events = recorder(sink);
    events.event(volume, 'Warning', 'VolumeFailedDelete', 'boom');
    await events.flush();
    const call = sink.calls[0];
    expect(call?.namespace).toBe('default');
    expect(call?.verb === 'create' && call.event.involvedObject.namespace).toBeUndefined();
  });

  it('never calls the API on the caller’s stack', async () => {
    const sink = new EventSink();
    const events = recorder(sink);
    events.event(claim, 'Normal', 'Provisioning', 'x');
    expect(sink.calls).toHaveLength(0);
    await events.flush();
    expect(sink.calls).toHaveLength(1);
  });

  it('bumps a repeated event with a strategic-merge patch instead of creating another', async () => {
    const sink = new EventSink();
    const events = recorder(sink);
    events.event(claim, 'Warning', 'ProvisioningFailed', 'boom');
    await vi.advanceTimersByTimeAsync(3_000);
    events.event(claim, 'Warning', 'ProvisioningFailed', 'boom');
    await events.flush();

    const [create, patch] = sink.calls;
    expect(patch).toEqual({
      verb: 'patch',
      namespace: 'ns',
      name: create?.verb === 'create' ? create.event.metadata.name : '',
      type: 'strategic',
      patch: { count: 2, lastTimestamp: '2025-01-01T00:00:03Z', message: 'boom' },
    });
  });

  it('creates the event afresh (without resourceVersion) when the patched one is gone', async () => {
    const sink = new EventSink();
    const events = recorder(sink);
    events.event(claim, 'Warning', 'ProvisioningFailed', 'boom');
    await events.flush();
    sink.answer = async (call) => {
      if (call.verb === 'patch') throw new ApiError(404, 'not found', { reason: 'NotFound' });
      return call.event;
    };
    events.event(claim, 'Warning', 'ProvisioningFailed', 'boom');
    await events.flush();

    expect(sink.calls.map((c) => c.verb)).toEqual(['create', 'patch', 'create']);
    const recreated = sink.calls[2];
    expect(recreated?.verb === 'create' && recreated.event).toMatchObject({ count: 2 });
    expect(recreated?.verb === 'create' && recreated.event.metadata.resourceVersion).toBeUndefined();
  });

  it('does not write events of an unknown type', async () => {
    const sink = new EventSink();
    const lines: string[] = [];
    const events = recorder(sink, { logger: createLogger({ write: (l) => lines.push(l) }) });
    events.event(claim, 'Bogus' as 'Normal', 'Provisioning', 'x');
    await events.flush();
    expect(sink.calls).toHaveLength(0);
    expect(lines.some((l) => l.includes('Unsupported event type'))).toBe(true);
  });

  it('logs every event it records', async () => {
    const lines: string[] = [];
    const events = recorder(new EventSink(), { logger: createLogger({ write: (l) => lines.push(l) }) });
    events.event(claim, 'Normal', 'ProvisioningSucceeded', 'Successfully provisioned volume pvc-1');
    expect(JSON.parse(lines[0] ?? '{}')).toMatchObject({
      level: 'info',
      msg: 'Event occurred',
      object: 'ns/claim-1',
      kind: 'PersistentVolumeClaim',
      type: 'Normal',
      reason: 'ProvisioningSucceeded',
      message: 'Successfully provisioned volume pvc-1',
    });
    await events.flush();
  });
});

describe('EventRecorder retries', () => {
  it('retries transport failures: first after a random part of 10 s, then every 10 s, 12 attempts in all', async () => {
    const sink = new EventSink();
    sink.answer = async () => {
      throw transportError();
    };
    const events = recorder(sink, { random: () => 0.25 });
    events.event(claim, 'Normal', 'Provisioning', 'x');
    await vi.advanceTimersByTimeAsync(0);
    expect(sink.calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(2_499);
    expect(sink.calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(sink.calls).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(sink.calls).toHaveLength(3);
    await vi.advanceTimersByTimeAsync(10 * 10_000);
    expect(sink.calls).toHaveLength(12);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(sink.calls).toHaveLength(12);
    await events.flush();
  });

  it('gives up at once when the server rejects the event', async () => {
    const sink = new EventSink();
    sink.answer = async () => {
      throw new ApiError(403, 'forbidden', { reason: 'Forbidden' });
    };
    const events = recorder(sink);
    events.event(claim, 'Normal', 'Provisioning', 'x');
    events.event(claim, 'Normal', 'Provisioning', 'y');
    await events.flush();
    expect(sink.calls).toHaveLength(2);
  });

  it('writes events one at a time, in order', async () => {
    const sink = new EventSink();
    const release = sink.hold();
    const events = recorder(sink);
    for (const message of ['a', 'b', 'c']) events.event(claim, 'Normal', 'Provisioning', message);
    // Time passing does not start the next write; only the answer to the one in flight does.
    for (const [answered, written] of [
      [0, ['a']],
      [1, ['a', 'b']],
      [2, ['a', 'b', 'c']],
    ] as const) {
      await vi.advanceTimersByTimeAsync(60_000);
      expect(sink.created()).toEqual(written);
      expect(release).toHaveLength(answered + 1);
      release[answered]?.();
    }
    await events.flush();
    expect(sink.created()).toEqual(['a', 'b', 'c']);
  });
});

describe('EventRecorder bounds', () => {
  it('drops and counts events beyond maxPending while the server is slow', async () => {
    const sink = new EventSink();
    const release = sink.hold();
    const registry = new Registry();
    const events = recorder(sink, { maxPending: 2, registry });

    events.event(claim, 'Normal', 'Provisioning', 'in flight');
    await vi.advanceTimersByTimeAsync(0);
    for (const message of ['queued 1', 'queued 2', 'dropped 1', 'dropped 2']) {
      events.event(claim, 'Normal', 'Provisioning', message);
    }
    expect(events.dropped).toBe(2);
    const metric = await registry.getSingleMetric('event_recorder_dropped_events_total')?.get();
    expect(metric?.values[0]?.value).toBe(2);

    while (release.length > 0 || sink.calls.length < 3) {
      release.shift()?.();
      await vi.advanceTimersByTimeAsync(0);
    }
    await events.flush();
    expect(sink.created()).toEqual(['in flight', 'queued 1', 'queued 2']);
  });

  /** A recorder with room for one queued event, on a manual clock, whose warnings are kept. */
  function warningRecorder(sink: EventSink) {
    const clock = new ManualClock(Date.UTC(2025, 0, 1));
    const lines: string[] = [];
    const events = recorder(sink, {
      clock,
      maxPending: 1,
      logger: createLogger({ level: 'warn', write: (line) => lines.push(line) }),
    });
    return { events, clock, warnings: () => lines.map((line) => JSON.parse(line)) };
  }

  it('logs a run of drops as one warning when it starts and one summary per interval, not a line per event', async () => {
    const sink = new EventSink();
    sink.hold();
    const { events, clock, warnings } = warningRecorder(sink);
    events.event(claim, 'Normal', 'Provisioning', 'in flight');
    await vi.advanceTimersByTimeAsync(0);
    events.event(claim, 'Normal', 'Provisioning', 'queued');
    for (let index = 0; index < 500; index++)
      events.event(claim, 'Normal', 'Provisioning', `dropped ${index}`);
    expect(events.dropped).toBe(500);
    expect(warnings()).toEqual([
      expect.objectContaining({
        msg: 'Event queue is full, dropping events until it has room',
        reason: 'Provisioning',
        message: 'dropped 0',
        maxPending: 1,
      }),
    ]);

    clock.advance(dropReportIntervalMs);
    expect(warnings().slice(1)).toEqual([
      expect.objectContaining({
        msg: 'Event queue was full, more events dropped',
        events: 499,
        totalDropped: 500,
      }),
    ]);
    // Still full: the next interval reports its drops; a quiet one ends the run.
    events.event(claim, 'Normal', 'Provisioning', 'dropped 500');
    clock.advance(dropReportIntervalMs);
    expect(warnings().slice(2)).toEqual([expect.objectContaining({ events: 1, totalDropped: 501 })]);
    clock.advance(dropReportIntervalMs);
    expect(warnings()).toHaveLength(3);
    expect(clock.pendingTimers()).toBe(0);

    // A new run starts with a warning naming its first event again.
    events.event(claim, 'Normal', 'Provisioning', 'dropped 501');
    events.event(claim, 'Normal', 'Provisioning', 'dropped 502');
    expect(warnings().slice(3)).toEqual([expect.objectContaining({ message: 'dropped 501' })]);
  });

  it('close() summarises the drops not yet reported', async () => {
    const sink = new EventSink();
    const { events, clock, warnings } = warningRecorder(sink);
    for (const message of ['queued', 'dropped 1', 'dropped 2', 'dropped 3']) {
      events.event(claim, 'Normal', 'Provisioning', message);
    }
    await events.close();
    expect(warnings()).toEqual([
      expect.objectContaining({ msg: 'Event queue is full, dropping events until it has room' }),
      expect.objectContaining({
        msg: 'Event queue was full, more events dropped',
        events: 2,
        totalDropped: 3,
      }),
    ]);
    expect(sink.created()).toEqual(['queued']);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('close() abandons pending retries, writes what is queued and ignores later events', async () => {
    const sink = new EventSink();
    const echo = sink.answer;
    sink.answer = async (call) => {
      if (call.verb === 'create' && call.event.message === 'unreachable') throw transportError();
      return echo(call);
    };
    const events = recorder(sink, { random: () => 0.5 });
    events.event(claim, 'Normal', 'Provisioning', 'unreachable');
    events.event(claim, 'Normal', 'Provisioning', 'queued');
    await vi.advanceTimersByTimeAsync(0);

    await events.close();
    events.event(claim, 'Normal', 'Provisioning', 'too late');
    await events.flush();
    expect(sink.created()).toEqual(['unreachable', 'queued']);
  });

  it('close() gives up after closeTimeoutMs: aborts the write in flight and drops the queue, counted', async () => {
    const sink = new EventSink();
    sink.answer = (_call, signal) =>
      new Promise((_resolve, reject) =>
        signal?.addEventListener('abort', () => reject(signal.reason), { once: true }),
      );
    const clock = new ManualClock(Date.UTC(2025, 0, 1));
    const registry = new Registry();
    const events = recorder(sink, { clock, registry, closeTimeoutMs: 5_000 });
    for (const message of ['in flight', 'queued 1', 'queued 2']) {
      events.event(claim, 'Normal', 'Provisioning', message);
    }
    await vi.advanceTimersByTimeAsync(0);
    expect(sink.calls).toHaveLength(1);

    let closed = false;
    const closing = events.close().then(() => {
      closed = true;
    });
    clock.advance(4_999);
    await vi.advanceTimersByTimeAsync(0);
    expect(closed).toBe(false);
    clock.advance(1);
    await closing;
    expect(sink.calls).toHaveLength(1);
    expect(events.dropped).toBe(3);
    const metric = await registry.getSingleMetric('event_recorder_dropped_events_total')?.get();
    expect(metric?.values[0]?.value).toBe(3);
  });
});
