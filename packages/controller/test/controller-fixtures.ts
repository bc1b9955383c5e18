/**
 * The ProvisionController tests' view of the public test kit (`/testing`): its harness pinned to the
 * provisioner name these tests were written for, and stopped after each test with vitest's hooks,
 * plus the positional object builders only these tests use.
 */

import type { V1PersistentVolume } from '@kubernetes/client-node';
import { afterEach } from 'vitest';
import {
  type HarnessOptions,
  Harness as KitHarness,
  manualHarness as kitManualHarness,
  type ManualHarness,
} from '../src/testing/index.ts';
import { dynamicallyProvisioned, newVolume } from './support/controller-objects.ts';

export {
  deleteCounts,
  eventually,
  type HarnessOptions,
  metricValue,
  processedItems,
  provisionCounts,
  pump,
  RecordingProvisioner,
  volumeFor,
} from '../src/testing/index.ts';
export {
  dynamicallyProvisioned,
  newClaim,
  newStorageClass,
  newVolume,
  newVolumeAttributesClass,
} from './support/controller-objects.ts';

/** The provisioner name of these tests (its Lease is `foo.bar-baz`). */
export const provisionerName = 'foo.bar/baz';

/** The kit's harness for provisioner {@link provisionerName}. */
export class Harness extends KitHarness {
  constructor(options: HarnessOptions = {}) {
    super({ provisionerName, ...options });
  }
}

/** Makes harnesses that are stopped after each test. */
export interface Harnesses {
  /** A harness, not started yet (e.g. to add reactors first). */
  create(options?: HarnessOptions): Harness;
  /** A started harness. */
  start(options?: HarnessOptions): Harness;
}

/** Stops the harnesses a file makes after each of its tests. Call once per file, outside tests. */
export function useHarnesses(): Harnesses {
  let made: Harness[] = [];
  afterEach(async () => {
    const stopping = made;
    made = [];
    await Promise.all(stopping.map((harness) => harness.stop()));
  });
  const create = (options: HarnessOptions = {}): Harness => {
    const harness = new Harness(options);
    made.push(harness);
    return harness;
  };
  return { create, start: (options) => create(options).start() };
}

/** The kit's harness on a manual clock, for provisioner {@link provisionerName}. */
export function manualHarness(options: HarnessOptions = {}): ManualHarness {
  return kitManualHarness({ provisionerName, ...options });
}

/** A promise the test opens by hand. */
export function gate(): { wait: Promise<void>; open: () => void } {
  let open: () => void = () => {};
  const wait = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { wait, open };
}

/** PV `pv-1` of class `class-1`, dynamically provisioned by these tests' provisioner, its claim gone. */
export function releasedVolume(extra: { finalizers?: string[] } = {}): V1PersistentVolume {
  return {
    ...newVolume('pv-1', 'Released', 'Delete', dynamicallyProvisioned(provisionerName), extra),
    spec: {
      ...newVolume('pv-1', 'Released', 'Delete', {}).spec,
      storageClassName: 'class-1',
      claimRef: { name: 'gone', namespace: 'default', uid: 'uid-gone' },
    },
  };
}
