/**
 * The payloads of {@link ProvisionControllerEvents}, the typed lifecycle events of a
 * `ProvisionController` (`controller.on('provisioned', …)`).
 *
 * Stability: stable (see "Versioning" in the repository README).
 *
 * @packageDocumentation
 */

export type {
  LeadingEvent,
  StoppedLeadingEvent,
  StoppedLeadingReason,
} from './leader-election/leader-events.ts';
export type {
  DeletedEvent,
  DeleteFailedEvent,
  ProvisionControllerEvents,
  ProvisionedEvent,
  ProvisionFailedEvent,
  SyncedEvent,
} from './lifecycle-events.ts';
export type { LifecycleEventMap, LifecycleSink } from './util/lifecycle-emitter.ts';
export { LifecycleEvents } from './util/lifecycle-emitter.ts';
