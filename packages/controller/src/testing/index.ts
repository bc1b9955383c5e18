/**
 * Test doubles for code built on `@kube-provisioner/controller`: an in-memory {@link FakeKubeApi}
 * and a {@link ManualClock}.
 *
 * @packageDocumentation
 */
export type {
  Action,
  FakeKubeApiOptions,
  InjectedFailure,
  Reactor,
  ReactorMatch,
  ReactorOutcome,
  Verb,
} from './fake-api.ts';
export { FakeKubeApi } from './fake-api.ts';
export { ManualClock } from './manual-clock.ts';
export type { StatusReason } from './status-error.ts';
export { failureStatus, statusError } from './status-error.ts';
