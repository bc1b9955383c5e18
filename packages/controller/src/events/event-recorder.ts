/**
 * Records `core/v1` Events about objects, like client-go's broadcaster, recorder and sink together:
 * `event()` only builds the event, logs it and queues it; one background loop correlates and writes
 * queued events one at a time, so a slow API server delays events, never the caller. A full queue
 * drops new events and counts them; the log gets one warning when dropping starts and one summary
 * per {@link dropReportIntervalMs} while it goes on, not a line per event (a burst can drop
 * thousands).
 */
import type { CoreV1Event, V1ObjectReference } from '@kubernetes/client-node';
import { Counter, type Registry } from 'prom-client';
import { isAlreadyExists, isApiError, isNotFound } from '../client/api-error.ts';
import type { KubeObject, ResourceClient } from '../client/resource-client.ts';
import { type Clock, realClock, sleep } from '../util/clock.ts';
import { type LogFields, type Logger, silentLogger } from '../util/logger.ts';
import { type CorrelatedEvent, EventCorrelator } from './event-correlator.ts';
import { EventNamer } from './event-name.ts';

/** Event type as the core Events API spells it. */
export type EventType = 'Normal' | 'Warning';

/** Records events about Kubernetes objects. */
export interface EventRecorder {
  /**
   * Records an event about `object`, which should carry `kind` and `apiVersion`. Never blocks and
   * never throws: the write happens in the background.
   */
  event(object: KubeObject, type: EventType, reason: string, message: string): void;
  /** Events dropped because the queue was full, or because `close()` gave up on them. */
  readonly dropped: number;
  /** Resolves once every event recorded so far has been written or given up. */
  flush(): Promise<void>;
  /**
   * Stops accepting events and resolves once the queue is written. Pending retries are abandoned
   * instead of waited for, and after `closeTimeoutMs` the write in flight is aborted and what is still
   * queued is dropped (counted), so a stop is never held up for long by an unreachable server.
   */
  close(): Promise<void>;
}

/** Options of {@link createEventRecorder}. */
export interface EventRecorderOptions {
  /** Where events are written. */
  events: ResourceClient<CoreV1Event>;
  /** `source.component` and `reportingComponent`. */
  component: string;
  /** `source.host` and `reportingInstance`. Default empty. */
  host?: string;
  clock?: Clock;
  logger?: Logger;
  /** Random numbers in [0, 1) for the first retry wait. Default `Math.random`. */
  random?: () => number;
  /** Events waiting to be written before new ones are dropped. Default 1000. */
  maxPending?: number;
  /** How long `close()` keeps writing queued events before dropping them. Default 5 s. */
  closeTimeoutMs?: number;
  /** If given, the counter `event_recorder_dropped_events_total` is registered here. */
  registry?: Registry;
}

/** How often a run of dropped events is summarised in the log while it lasts. */
export const dropReportIntervalMs = 10_000;
const maxAttempts = 12;
const retryIntervalMs = 10_000;
const droppedMetric = 'event_recorder_dropped_events_total';

/** Creates a recorder that writes through `options.events`. */
export function createEventRecorder(options: EventRecorderOptions): EventRecorder {
  return new QueuedEventRecorder(options);
}

class QueuedEventRecorder implements EventRecorder {
  readonly #events: ResourceClient<CoreV1Event>;
  readonly #source: { component: string; host: string };
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #random: () => number;
  readonly #maxPending: number;
  readonly #closeTimeoutMs: number;
  readonly #droppedCounter: Counter | undefined;
  readonly #namer = new EventNamer();
  readonly #correlator: EventCorrelator;
  readonly #closing = new AbortController();
  /** Aborted `closeTimeoutMs` after closing: every write still running or queued is given up. */
  readonly #abandon = new AbortController();
  readonly #queue: CoreV1Event[] = [];
  #draining: Promise<void> | undefined;
  #dropped = 0;
  /** Drops not yet summarised in the log; set while a run of drops is being reported. */
  #unreported: number | undefined;
  #cancelDropReport: (() => void) | undefined;

  constructor(options: EventRecorderOptions) {
    if (!options.component) throw new TypeError('event recorder: component must not be empty');
    const maxPending = options.maxPending ?? 1000;
    if (!(maxPending >= 1)) {
      throw new RangeError(`event recorder: maxPending must be >= 1, got ${maxPending}`);
    }
    this.#events = options.events;
    this.#source = { component: options.component, host: options.host ?? '' };
    this.#clock = options.clock ?? realClock;
    this.#logger = options.logger ?? silentLogger;
    this.#random = options.random ?? Math.random;
    this.#maxPending = maxPending;
    this.#closeTimeoutMs = options.closeTimeoutMs ?? 5_000;
    if (!(this.#closeTimeoutMs >= 0)) {
      throw new RangeError(`event recorder: closeTimeoutMs must be >= 0, got ${this.#closeTimeoutMs}`);
    }
    this.#droppedCounter = options.registry && droppedCounter(options.registry);
    this.#correlator = new EventCorrelator({ clock: this.#clock, namer: this.#namer });
  }

  get dropped(): number {
    return this.#dropped;
  }

  event(object: KubeObject, type: EventType, reason: string, message: string): void {
    const involvedObject = objectReference(object);
    const fields = {
      object: involvedObject.namespace
        ? `${involvedObject.namespace}/${involvedObject.name}`
        : involvedObject.name,
      kind: involvedObject.kind,
      apiVersion: involvedObject.apiVersion,
      type,
      reason,
      message,
    };
    if (type !== 'Normal' && type !== 'Warning') {
      this.#logger.error(fields, 'Unsupported event type, event not recorded');
      return;
    }
    this.#logger.info(fields, 'Event occurred');
    if (this.#closing.signal.aborted) {
      this.#logger.debug(fields, 'Event recorder is closed, event not written');
      return;
    }
    if (this.#queue.length >= this.#maxPending) {
      this.#countDropped(1);
      this.#reportDrop(fields);
      return;
    }
    this.#queue.push(this.#makeEvent(involvedObject, type, reason, message));
    this.#draining ??= this.#drain();
  }

  async flush(): Promise<void> {
    while (this.#draining) await this.#draining;
  }

  async close(): Promise<void> {
    if (this.#closing.signal.aborted) return this.flush();
    this.#closing.abort();
    const cancel = this.#clock.setTimer(() => {
      this.#abandon.abort();
      const remaining = this.#queue.splice(0).length;
      if (remaining > 0) {
        this.#countDropped(remaining);
        this.#logger.warn({ events: remaining }, 'Event recorder closed before these events were written');
      }
    }, this.#closeTimeoutMs);
    try {
      await this.flush();
    } finally {
      cancel();
      this.#summariseDrops();
    }
  }

  /**
   * The first drop of a run is logged with its event; later ones are counted and summarised every
   * {@link dropReportIntervalMs} until an interval passes without drops (or the recorder closes).
   */
  #reportDrop(fields: LogFields): void {
    if (this.#unreported !== undefined) {
      this.#unreported++;
      return;
    }
    this.#logger.warn(
      { ...fields, maxPending: this.#maxPending },
      'Event queue is full, dropping events until it has room',
    );
    this.#unreported = 0;
    this.#scheduleDropReport();
  }

  #scheduleDropReport(): void {
    this.#cancelDropReport = this.#clock.setTimer(() => {
      const unreported = this.#unreported ?? 0;
      this.#summariseDrops();
      // Still dropping: keep reporting; a quiet interval ends the run.
      if (unreported > 0) {
        this.#unreported = 0;
        this.#scheduleDropReport();
      }
    }, dropReportIntervalMs);
  }

  #summariseDrops(): void {
    this.#cancelDropReport?.();
    this.#cancelDropReport = undefined;
    const unreported = this.#unreported ?? 0;
    this.#unreported = undefined;
    if (unreported > 0) {
      this.#logger.warn(
        { events: unreported, totalDropped: this.#dropped },
        'Event queue was full, more events dropped',
      );
    }
  }

  #countDropped(count: number): void {
    this.#dropped += count;
    this.#droppedCounter?.inc(count);
  }

  #makeEvent(
    involvedObject: V1ObjectReference,
    type: EventType,
    reason: string,
    message: string,
  ): CoreV1Event {
    const now = this.#clock.wallNow();
    const timestamp = new Date(now);
    return {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: {
        name: this.#namer.name(involvedObject.name ?? '', now),
        // Events about cluster-scoped objects (PVs) live in `default`, as in client-go.
        namespace: involvedObject.namespace || 'default',
      },
      involvedObject,
      reason,
      message,
      firstTimestamp: timestamp,
      lastTimestamp: timestamp,
      count: 1,
      type,
      source: { ...this.#source },
      reportingComponent: this.#source.component,
      reportingInstance: this.#source.host,
    };
  }

  async #drain(): Promise<void> {
    // Correlation and writing never run on the caller's stack.
    await Promise.resolve();
    try {
      for (let event = this.#queue.shift(); event !== undefined; event = this.#queue.shift()) {
        try {
          const correlated = this.#correlator.correlate(event);
          if (correlated === undefined) {
            this.#logger.debug(
              { event: event.metadata.name, reason: event.reason },
              'Event dropped by the spam filter',
            );
            continue;
          }
          await this.#write(correlated);
        } catch (err) {
          this.#logger.error({ err, event: event.metadata.name }, 'Unable to write event');
        }
      }
    } finally {
      // Cleared in the same tick the queue was found empty, so a new event always finds a drain running or starts one.
      this.#draining = undefined;
    }
  }

  /** Writes one event: up to 12 attempts 10 s apart, the first wait random to spread clients. */
  async #write(correlated: CorrelatedEvent): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      if (await this.#attempt(correlated)) return;
      const fields = { event: correlated.event.metadata.name, attempt };
      if (this.#abandon.signal.aborted) {
        this.#countDropped(1);
        this.#logger.warn(fields, 'Event recorder closed before this event was written');
        return;
      }
      if (attempt >= maxAttempts) {
        this.#logger.error(fields, 'Unable to write event, retry limit exceeded');
        return;
      }
      const delay = attempt === 1 ? this.#random() * retryIntervalMs : retryIntervalMs;
      try {
        await sleep(this.#clock, delay, this.#closing.signal);
      } catch {
        this.#logger.error(fields, 'Unable to write event, recorder is closed');
        return;
      }
    }
  }

  /** One PATCH-or-CREATE; true when done (written, or rejected by the server), false to retry. */
  async #attempt({ event, patch, key }: CorrelatedEvent): Promise<boolean> {
    const namespace = event.metadata.namespace ?? 'default';
    const options = { namespace, signal: this.#abandon.signal };
    let result = patch
      ? await settle(this.#events.patch(event.metadata.name ?? '', patch, 'strategic', options))
      : undefined;
    if (result === undefined || ('error' in result && isNotFound(result.error))) {
      // The event may have expired on the server: create it afresh.
      const { resourceVersion: _, ...metadata } = event.metadata;
      result = await settle(this.#events.create({ ...event, metadata }, options));
    }
    if ('written' in result) {
      this.#correlator.observeWritten(key, result.written);
      return true;
    }
    const fields = { event: event.metadata.name, err: result.error };
    if (isApiError(result.error)) {
      // The same request would be rejected again.
      const expected = isAlreadyExists(result.error) || isNamespaceTerminating(result.error);
      this.#logger[expected ? 'debug' : 'error'](fields, 'Server rejected event, not retrying');
      return true;
    }
    this.#logger.error(fields, 'Unable to write event, may retry');
    return false;
  }
}

/** The reference client-go's `GetReference` builds, from the object's own type and metadata. */
function objectReference(object: KubeObject): V1ObjectReference {
  const reference: V1ObjectReference = {};
  const { metadata } = object;
  const fields: [keyof V1ObjectReference, string | undefined][] = [
    ['kind', object.kind],
    ['apiVersion', object.apiVersion],
    ['name', metadata?.name],
    ['namespace', metadata?.namespace],
    ['uid', metadata?.uid],
    ['resourceVersion', metadata?.resourceVersion],
  ];
  for (const [field, value] of fields) if (value) reference[field] = value;
  return reference;
}

function isNamespaceTerminating(err: unknown): boolean {
  return (
    isApiError(err) &&
    (err.status?.details?.causes ?? []).some((cause) => cause.reason === 'NamespaceTerminating')
  );
}

async function settle(call: Promise<CoreV1Event>): Promise<{ written: CoreV1Event } | { error: unknown }> {
  try {
    return { written: await call };
  } catch (error) {
    return { error };
  }
}

function droppedCounter(registry: Registry): Counter {
  const existing = registry.getSingleMetric(droppedMetric);
  if (existing instanceof Counter) return existing;
  return new Counter({
    name: droppedMetric,
    help: 'Events the recorder dropped: its queue of pending writes was full, or it closed before writing them.',
    registers: [registry],
  });
}
