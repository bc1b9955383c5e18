/**
 * client-go's event correlation, run on every event before it is written: the aggregator folds
 * events that differ only in their message, the dedupe logger turns repeats into count bumps, and
 * the spam filter rate-limits each source and object. Each stage keeps an LRU cache of 4096 keys.
 */
import type { CoreV1Event } from '@kubernetes/client-node';
import { type Clock, realClock } from '../util/clock.ts';
import { TokenBucket } from '../util/token-bucket.ts';
import { EventNamer } from './event-name.ts';
import { LruCache } from './lru.ts';

const cacheEntries = 4096;
const aggregateMaxMessages = 10;
const aggregateWindowMs = 600_000;
const spamBurst = 25;
const spamQps = 1 / 300;
const aggregatePrefix = '(combined from similar events): ';

/** The strategic-merge patch that bumps an existing event. */
export interface EventPatch {
  count: number;
  /** RFC 3339, whole seconds, as `metav1.Time` serialises. */
  lastTimestamp: string;
  /** Absent when empty, as a two-way merge patch would leave it out. */
  message?: string;
}

/** What to write for one recorded event. */
export interface CorrelatedEvent {
  /** The event to create, or the existing event (cached name and first timestamp) to patch. */
  event: CoreV1Event;
  /** Set when the event already exists on the server: PATCH it, falling back to CREATE on 404. */
  patch: EventPatch | undefined;
  /** Pass back to {@link EventCorrelator.observeWritten} with the server's answer. */
  key: string;
}

/** Options of {@link EventCorrelator}. */
export interface EventCorrelatorOptions {
  clock?: Clock;
  /** Names aggregate events; share the recorder's so names stay unique. */
  namer?: EventNamer;
}

interface AggregateRecord {
  messages: Set<string>;
  lastMs: number;
}

interface Observation {
  count: number;
  firstTimestamp: Date | undefined;
  name: string | undefined;
  resourceVersion: string | undefined;
}

/** Correlates events as client-go's `EventCorrelator` does with its default options. */
export class EventCorrelator {
  readonly #clock: Clock;
  readonly #namer: EventNamer;
  readonly #aggregates = new LruCache<string, AggregateRecord>(cacheEntries);
  readonly #observations = new LruCache<string, Observation>(cacheEntries);
  readonly #spamBuckets = new LruCache<string, TokenBucket>(cacheEntries);

  constructor(options: EventCorrelatorOptions = {}) {
    this.#clock = options.clock ?? realClock;
    this.#namer = options.namer ?? new EventNamer();
  }

  /** Correlates `event`; `undefined` means the spam filter dropped it. */
  correlate(event: CoreV1Event): CorrelatedEvent | undefined {
    const { event: aggregated, key } = this.#aggregate(event);
    const observed = this.#observe(aggregated, key);
    if (!this.#spamBucket(observed.event).tryTake()) return undefined;
    return { ...observed, key };
  }

  /** Records the server's copy of a written event, so the next repeat patches the right object. */
  observeWritten(key: string, written: CoreV1Event): void {
    this.#observations.set(key, {
      count: written.count ?? 1,
      firstTimestamp: written.firstTimestamp,
      name: written.metadata.name,
      resourceVersion: written.metadata.resourceVersion,
    });
  }

  #aggregate(event: CoreV1Event): { event: CoreV1Event; key: string } {
    const now = this.#clock.now();
    const aggregateKey = keyOf(event, [
      'component',
      'host',
      'kind',
      'namespace',
      'name',
      'uid',
      'apiVersion',
      'type',
      'reason',
      'reportingController',
      'reportingInstance',
    ]);
    let record = this.#aggregates.get(aggregateKey);
    if (record === undefined || now - record.lastMs > aggregateWindowMs) {
      record = { messages: new Set(), lastMs: now };
    }
    const message = event.message ?? '';
    record.messages.add(message);
    record.lastMs = now;
    this.#aggregates.set(aggregateKey, record);
    if (record.messages.size < aggregateMaxMessages) return { event, key: fullKey(event) };

    // Keep the set below the threshold. Go pops an arbitrary member; popping the newest one is a
    // deterministic choice of the same rule.
    record.messages.delete(message);
    const timestamp = new Date(this.#clock.wallNow());
    const aggregate: CoreV1Event = {
      metadata: {
        name: this.#namer.name(event.involvedObject.name ?? '', now),
        ...(event.metadata.namespace === undefined ? {} : { namespace: event.metadata.namespace }),
      },
      involvedObject: event.involvedObject,
      count: 1,
      firstTimestamp: timestamp,
      lastTimestamp: timestamp,
      message: `${aggregatePrefix}${message}`,
    };
    copyDefined(event, aggregate, ['type', 'reason', 'source']);
    return { event: aggregate, key: aggregateKey };
  }

  #observe(event: CoreV1Event, key: string): Omit<CorrelatedEvent, 'key'> {
    const last = this.#observations.get(key);
    let result: Omit<CorrelatedEvent, 'key'> = { event, patch: undefined };
    if (last !== undefined && last.count > 0) {
      const count = last.count + 1;
      const metadata = { ...event.metadata };
      if (last.name !== undefined) metadata.name = last.name;
      if (last.resourceVersion !== undefined) metadata.resourceVersion = last.resourceVersion;
      const bumped: CoreV1Event = { ...event, metadata, count };
      if (last.firstTimestamp !== undefined) bumped.firstTimestamp = last.firstTimestamp;
      const patch: EventPatch = {
        count,
        lastTimestamp: rfc3339Seconds(event.lastTimestamp ?? new Date(this.#clock.wallNow())),
      };
      if (event.message) patch.message = event.message;
      result = { event: bumped, patch };
    }
    this.#observations.set(key, {
      count: result.event.count ?? 1,
      firstTimestamp: result.event.firstTimestamp,
      name: result.event.metadata.name,
      resourceVersion: result.event.metadata.resourceVersion,
    });
    return result;
  }

  #spamBucket(event: CoreV1Event): TokenBucket {
    const key = keyOf(event, ['component', 'host', 'kind', 'namespace', 'name', 'uid', 'apiVersion', 'type']);
    let bucket = this.#spamBuckets.get(key);
    if (bucket === undefined) {
      bucket = new TokenBucket(spamQps, spamBurst, this.#clock);
    }
    this.#spamBuckets.set(key, bucket);
    return bucket;
  }
}

type KeyField =
  | 'component'
  | 'host'
  | 'kind'
  | 'namespace'
  | 'name'
  | 'fieldPath'
  | 'uid'
  | 'apiVersion'
  | 'type'
  | 'reason'
  | 'reportingController'
  | 'reportingInstance'
  | 'message';

const keyFields: Record<KeyField, (event: CoreV1Event) => string | undefined> = {
  component: (e) => e.source?.component,
  host: (e) => e.source?.host,
  kind: (e) => e.involvedObject.kind,
  namespace: (e) => e.involvedObject.namespace,
  name: (e) => e.involvedObject.name,
  fieldPath: (e) => e.involvedObject.fieldPath,
  uid: (e) => e.involvedObject.uid,
  apiVersion: (e) => e.involvedObject.apiVersion,
  type: (e) => e.type,
  reason: (e) => e.reason,
  reportingController: (e) => e.reportingComponent,
  reportingInstance: (e) => e.reportingInstance,
  message: (e) => e.message,
};

/** Concatenates the fields with no separator, exactly as client-go builds its cache keys. */
function keyOf(event: CoreV1Event, fields: readonly KeyField[]): string {
  return fields.map((field) => keyFields[field](event) ?? '').join('');
}

/** The dedupe logger's key: everything that identifies a repeat of the same event. */
function fullKey(event: CoreV1Event): string {
  return keyOf(event, [
    'component',
    'host',
    'kind',
    'namespace',
    'name',
    'fieldPath',
    'uid',
    'apiVersion',
    'type',
    'reason',
    'message',
  ]);
}

function copyDefined<K extends keyof CoreV1Event>(
  from: CoreV1Event,
  to: CoreV1Event,
  keys: readonly K[],
): void {
  for (const key of keys) {
    if (from[key] !== undefined) to[key] = from[key];
  }
}

/** Formats `date` as `metav1.Time` does: RFC 3339 in UTC, whole seconds. */
function rfc3339Seconds(date: Date): string {
  return `${date.toISOString().slice(0, 19)}Z`;
}
