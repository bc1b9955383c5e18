/**
 * A `core/v1` Event recorder with client-go's correlation (aggregation, spam filter), written in the
 * background one event at a time.
 *
 * Stability: stable (see "Versioning" in the repository README).
 *
 * @packageDocumentation
 */
export type { EventRecorder, EventRecorderOptions, EventType } from './event-recorder.ts';
export { createEventRecorder } from './event-recorder.ts';
