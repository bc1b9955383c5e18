/**
 * Test kit for code built on `@kube-provisioner/controller`: an in-memory {@link FakeKubeApi}, a
 * {@link ManualClock}, a {@link Harness} that runs a controller on them, ways to wait without sleeps
 * ({@link eventually}, {@link pump}, {@link settle}), builders of the claims, classes and options a
 * provisioner is handed, and readers of the controller's metrics.
 *
 * Stability: stable (see "Versioning" in the repository README).
 *
 * @packageDocumentation
 */

export type { HarnessOptions, ManualHarness, SeedObject } from './controller-harness.ts';
export { Harness, manualHarness, RecordingProvisioner } from './controller-harness.ts';
export type { FakeKubeApiOptions } from './fake-api.ts';
export { FakeKubeApi } from './fake-api.ts';
export type { LeaseTenure, Overlap, WorkLine } from './leadership-overlap.ts';
export { findOverlaps, overlapWindows } from './leadership-overlap.ts';
export { ManualClock } from './manual-clock.ts';
export type { OutcomeCounts } from './metric-samples.ts';
export { deleteCounts, metricValue, processedItems, provisionCounts } from './metric-samples.ts';
export type { ClaimFixtureInit, ReleaseFixtureInit, StorageClassFixtureInit } from './provision-fixtures.ts';
export {
  claimFixture,
  finishedFailure,
  fixtureClassName,
  fixtureProvisionerName,
  operationContext,
  provisionedVolume,
  provisionOptionsFor,
  releasedVolumeFixture,
  storageClassFixture,
  volumeFor,
} from './provision-fixtures.ts';
export type {
  Action,
  InjectedFailure,
  Reactor,
  ReactorMatch,
  ReactorOutcome,
  Verb,
} from './reactor-chain.ts';
export type { StatusReason } from './status-error.ts';
export { failureStatus, statusError } from './status-error.ts';
export type { EventuallyOptions } from './wait.ts';
export { eventually, pump, settle } from './wait.ts';
