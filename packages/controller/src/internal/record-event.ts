/** The one thing the sync paths need from an event recorder; the controller adapts the real one. */
import type { KubeObject } from '../client/resource-client.ts';
import type { EventType } from '../events/event-recorder.ts';

/** Records an event about `object`. Fire-and-forget: writing happens in the background. */
export type RecordEvent = (object: KubeObject, type: EventType, reason: string, message: string) => void;
