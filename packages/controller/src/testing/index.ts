/**
 * Test doubles for code built on `@kube-provisioner/controller`: an in-memory {@link FakeKubeApi},
 * a {@link ManualClock}, and builders of the claims, classes and options a provisioner is handed.
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
export type { ClaimFixtureInit, ReleaseFixtureInit } from './provision-fixtures.ts';
export {
  claimFixture,
  finishedFailure,
  operationContext,
  provisionedVolume,
  provisionOptionsFor,
  releasedVolumeFixture,
  storageClassFixture,
} from './provision-fixtures.ts';
export type { StatusReason } from './status-error.ts';
export { failureStatus, statusError } from './status-error.ts';
