import type { V1PersistentVolumeClaim, V1StorageClass } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { InfeasibleError } from '../src/errors.ts';
import { ClaimSync, DelayRetryError } from '../src/internal/claim-sync.ts';
import { createControllerMetrics } from '../src/internal/controller-metrics.ts';
import { SlowRetrySet } from '../src/internal/slow-retry.ts';
import { openFence } from '../src/internal/work-fence.ts';
import type { ProvisioningState } from '../src/provisioner.ts';
import { ManualClock } from '../src/testing/manual-clock.ts';
import { silentLogger } from '../src/util/logger.ts';
import { annAlphaSelectedNode, annBetaStorageProvisioner, annSelectedNode } from '../src/wire-names.ts';
import {
  newClaim,
  newStorageClass,
  provisionerName,
  RecordingProvisioner,
  volumeFor,
} from './controller-fixtures.ts';

const context = { signal: new AbortController().signal, assertLeader: () => {}, logger: silentLogger };

function setup(
  options: { classes?: V1StorageClass[]; claims?: V1PersistentVolumeClaim[]; names?: string[] } = {},
) {
  const clock = new ManualClock(1_000_000);
  const provisioner = new RecordingProvisioner();
  const classes = new Map(
    (options.classes ?? [newStorageClass('class-1', provisionerName)]).map((c) => [c.metadata?.name, c]),
  );
  const claims = options.claims ?? [];
  const events: string[] = [];
  const saved: string[] = [];
  const slowRetry = new SlowRetrySet(300_000, clock);
  const rescheduled: number[] = [];
  const sync = new ClaimSync({
    provisioner,
    provisionerName,
    knownNames: new Set([provisionerName, ...(options.names ?? [])]),
    volumeName: (claim) => `pvc-${claim.metadata?.uid}`,
    addFinalizer: false,
    claimsByUid: (uid) => claims.filter((claim) => claim.metadata?.uid === uid),
    getClass: (name) => classes.get(name),
    volumeExists: () => false,
    volumeAttributesClass: async (name) => ({
      kind: 'missing',
      error: new Error(`volumeattributesclasses.storage.k8s.io "${name}" not found`),
    }),
    reschedule: async () => void rescheduled.push(1),
    slowRetry,
    recordEvent: (_object, type, reason, message) => events.push(`${type} ${reason}: ${message}`),
    store: { savePersistentVolume: async (_claim, volume) => void saved.push(volume.metadata?.name ?? '') },
    metrics: createControllerMetrics(new Registry()),
    clock,
    events: { emit: () => {} },
    fence: openFence,
  });
  return { sync, provisioner, clock, events, saved, slowRetry, classes, rescheduled };
}

const claim1 = newClaim('claim-1', 'uid-1-1', 'class-1', provisionerName);

describe('TestController: the in-progress map', () => {
  const cases: [string, ProvisioningState, boolean, boolean][] = [
    ['ext provisioner: final error does not mark claim as in progress', 'Finished', false, false],
    ['ext provisioner: provisional error marks claim as in progress', 'Background', false, true],
    ['ext provisioner: NoChange error does not mark claim as in progress', 'NoChange', false, false],
    ['ext provisioner: final error removes claim from in progress', 'Finished', true, false],
    ['ext provisioner: provisional error does not remove claim from in progress', 'Background', true, true],
    ['ext provisioner: NoChange error does not remove claim from in progress', 'NoChange', true, true],
  ];
  for (const [title, state, before, after] of cases) {
    it(title, async () => {
      const { sync, provisioner } = setup({ claims: [claim1] });
      if (before) sync.inProgress.set('uid-1-1', claim1);
      provisioner.provisionResult = () => ({ error: new Error('mock error'), state });
      await expect(sync.syncKey('uid-1-1', context)).rejects.toThrow('mock error');
      expect(sync.inProgress.has('uid-1-1')).toBe(after);
    });
  }

  it('ext provisioner: claimsInProgress is used for deleted PVCs', async () => {
    const { sync, provisioner, saved } = setup({ claims: [] });
    sync.inProgress.set('uid-1-1', claim1);
    await sync.syncKey('uid-1-1', context);
    expect(provisioner.provisionCalls.map((call) => call.pvc.metadata?.name)).toEqual(['claim-1']);
    expect(saved).toEqual(['pvc-uid-1-1']);
    expect(sync.inProgress.size).toBe(0);
  });

  it('a key that resolves to no claim finishes quietly', async () => {
    const { sync, provisioner } = setup({ claims: [] });
    await sync.syncKey('gone', context);
    expect(provisioner.provisionCalls).toHaveLength(0);
  });

  it('hands the provisioner a deep-frozen copy of the claim', async () => {
    const { sync, provisioner } = setup({ claims: [claim1] });
    await sync.syncKey('uid-1-1', context);
    const pvc = provisioner.provisionCalls[0]?.pvc;
    expect(Object.isFrozen(pvc?.metadata?.annotations)).toBe(true);
    expect(pvc).not.toBe(claim1);
  });
});

describe('TestInfeasibleRetry', () => {
  it('Should retry non-infeasible error normally', async () => {
    const { sync, provisioner } = setup();
    provisioner.provisionResult = () => ({
      error: new Error('fake non-infeasible error'),
      state: 'Finished',
    });
    await expect(sync.sync(claim1, context)).rejects.toThrow('fake non-infeasible error');
    await expect(sync.sync(claim1, context)).rejects.toThrow('fake non-infeasible error');
    expect(provisioner.provisionCalls).toHaveLength(2);
  });

  it('Should NOT retry infeasible error normally', async () => {
    const { sync, provisioner, events } = setup();
    provisioner.provisionResult = () => ({
      error: new InfeasibleError('fake infeasible error'),
      state: 'Finished',
    });
    await expect(sync.sync(claim1, context)).rejects.toThrow('fake infeasible error');
    await expect(sync.sync(claim1, context)).rejects.toBeInstanceOf(DelayRetryError);
    expect(provisioner.provisionCalls).toHaveLength(1);
    expect(events).toContain(
      'Warning ProvisioningFailed: Volume provisioning failed with infeasible error. Retries will be delayed. fake infeasible error',
    );
  });

  it('Should EVENTUALLY retry infeasible error (after retryIntervalMax)', async () => {
    const { sync, provisioner, clock } = setup();
    provisioner.provisionResult = () => ({
      error: Object.assign(new Error('grpc invalid'), { code: 3 }),
      state: 'Finished',
    });
    await expect(sync.sync(claim1, context)).rejects.toThrow('grpc invalid');
    clock.advance(300_000);
    await expect(sync.sync(claim1, context)).rejects.toThrow('grpc invalid');
    expect(provisioner.provisionCalls).toHaveLength(2);
  });

  it('retries at once when the StorageClass was re-created', async () => {
    const { sync, provisioner, classes } = setup();
    provisioner.provisionResult = () => ({ error: new InfeasibleError('bad parameter'), state: 'Finished' });
    await expect(sync.sync(claim1, context)).rejects.toThrow('bad parameter');
    classes.set('class-1', {
      ...newStorageClass('class-1', provisionerName),
      metadata: { name: 'class-1', uid: 'new' },
    });
    await expect(sync.sync(claim1, context)).rejects.toThrow('bad parameter');
    expect(provisioner.provisionCalls).toHaveLength(2);
  });
});

describe('TestShouldProvision', () => {
  const wffc = newStorageClass('class-1', provisionerName, { volumeBindingMode: 'WaitForFirstConsumer' });
  const cases: [
    string,
    V1PersistentVolumeClaim,
    boolean,
    { names?: string[]; classes?: V1StorageClass[]; qualifier?: boolean },
  ][] = [
    ['should provision based on provisionerName', claim1, true, {}],
    [
      'should provision based on additionalProvisionerNames',
      newClaim('c', 'u', 'class-1', 'foo.xyz/baz'),
      true,
      { names: ['foo.xyz/baz'] },
    ],
    ['claim already bound', newClaim('c', 'u', 'class-1', provisionerName, 'foo'), false, {}],
    ["not this provisioner's job", newClaim('c', 'u', 'class-1', 'abc.def/ghi'), false, {}],
    [
      'unknown provisioner annotation 1.5',
      newClaim('c', 'u', 'class-1', undefined, '', { [annBetaStorageProvisioner]: 'abc.def/ghi' }),
      false,
      {},
    ],
    ['no provisioner annotation 1.5', newClaim('c', 'u', 'class-1', undefined), false, {}],
    ['unknown provisioner annotation 1.23', newClaim('c', 'u', 'class-1', 'abc.def/ghi'), false, {}],
    ['qualifier says no', claim1, false, { qualifier: false }],
    ['qualifier says yes, should provision', claim1, true, { qualifier: true }],
    [
      'if PVC is in delay binding mode, should not provision if annSelectedNode is not set',
      claim1,
      false,
      { classes: [wffc] },
    ],
    [
      'if PVC is in delay binding mode, should provision if annSelectedNode is set',
      newClaim('c', 'u', 'class-1', undefined, '', {
        [annBetaStorageProvisioner]: provisionerName,
        [annSelectedNode]: 'node1',
      }),
      true,
      { classes: [wffc] },
    ],
    [
      'if PVC is in delay binding mode, should provision if annSelectedNode is set with annStorageProvisioner',
      newClaim('c', 'u', 'class-1', provisionerName, '', { [annSelectedNode]: 'node1' }),
      true,
      { classes: [wffc] },
    ],
  ];
  for (const [title, claim, expected, options] of cases) {
    it(title, async () => {
      const { sync, provisioner } = setup(options);
      if (options.qualifier !== undefined)
        Object.assign(provisioner, { shouldProvision: () => options.qualifier });
      expect(await sync.shouldProvision(claim, context)).toBe(expected);
    });
  }

  it('no such class', async () => {
    const { sync } = setup({ classes: [] });
    await expect(sync.shouldProvision(claim1, context)).rejects.toThrow('storageClass "class-1" not found');
  });
});

describe('TestCanProvision', () => {
  const withMode = (mode: string | undefined) => {
    const claim = newClaim('claim-1', 'uid-1-1', 'class-1', provisionerName);
    if (mode) claim.spec = { ...claim.spec, volumeMode: mode };
    return claim;
  };
  const cases: [string, string | undefined, boolean | undefined, boolean][] = [
    ['Undefined volumeMode PV request to provisioner w/o BlockProvisoner I/F', undefined, undefined, true],
    [
      'FileSystem volumeMode PV request to provisioner w/o BlockProvisoner I/F',
      'Filesystem',
      undefined,
      true,
    ],
    ['Block volumeMode PV request to provisioner w/o BlockProvisoner I/F', 'Block', undefined, false],
    ['Undefined volumeMode PV request to BlockProvisioner that returns false', undefined, false, true],
    ['FileSystem volumeMode PV request to BlockProvisioner that returns false', 'Filesystem', false, true],
    ['Block volumeMode PV request to BlockProvisioner that returns false', 'Block', false, false],
    ['Undefined volumeMode PV request to BlockProvisioner that returns true', undefined, true, true],
    ['FileSystem volumeMode PV request to BlockProvisioner that returns true', 'Filesystem', true, true],
    ['Block volumeMode PV request to BlockProvisioner that returns true', 'Block', true, true],
  ];
  for (const [title, mode, block, provisions] of cases) {
    it(title, async () => {
      const { sync, provisioner, saved } = setup();
      if (block !== undefined) Object.assign(provisioner, { supportsBlock: () => block });
      await sync.sync(withMode(mode), context);
      expect(saved).toEqual(provisions ? ['pvc-uid-1-1'] : []);
    });
  }
});

describe('TestTopologyParams', () => {
  const topology = [
    { matchLabelExpressions: [{ key: 'failure-domain.beta.kubernetes.io/zone', values: ['zone1'] }] },
  ];
  const cases: [string, V1StorageClass, Record<string, string>, { topologies: boolean; node: string }][] = [
    [
      'provision without topology information',
      newStorageClass('class-1', provisionerName),
      {},
      { topologies: false, node: '' },
    ],
    [
      'provision with AllowedTopologies',
      newStorageClass('class-1', provisionerName, { allowedTopologies: topology }),
      {},
      { topologies: true, node: '' },
    ],
    [
      'provision with selected node',
      newStorageClass('class-1', provisionerName, { volumeBindingMode: 'WaitForFirstConsumer' }),
      { [annSelectedNode]: 'node-1' },
      { topologies: false, node: 'node-1' },
    ],
    [
      'provision with AllowedTopologies and selected node',
      newStorageClass('class-1', provisionerName, {
        volumeBindingMode: 'WaitForFirstConsumer',
        allowedTopologies: topology,
      }),
      { [annSelectedNode]: 'node-1' },
      { topologies: true, node: 'node-1' },
    ],
    [
      'the alpha selected-node annotation is a fallback for the name only',
      newStorageClass('class-1', provisionerName),
      { [annAlphaSelectedNode]: 'node-2' },
      { topologies: false, node: 'node-2' },
    ],
  ];
  for (const [title, storageClass, annotations, expected] of cases) {
    it(title, async () => {
      const { sync, provisioner } = setup({ classes: [storageClass] });
      await sync.sync(newClaim('claim-1', 'uid-1-1', 'class-1', provisionerName, '', annotations), context);
      const call = provisioner.provisionCalls[0];
      expect(call?.selectedNodeName).toBe(expected.node);
      expect(call?.storageClass.allowedTopologies).toEqual(expected.topologies ? topology : undefined);
    });
  }
});

describe('reschedule', () => {
  it('does not provision the cached claim again until the cache shows the patched version', async () => {
    const waiting = {
      ...newClaim('claim-1', 'uid-1-1', 'class-1', provisionerName, '', { [annSelectedNode]: 'node-1' }),
    };
    waiting.metadata = { ...waiting.metadata, resourceVersion: '10' };
    const { sync, provisioner, rescheduled } = setup({ claims: [waiting] });
    provisioner.provisionResult = () => ({ error: new Error('node full'), state: 'Reschedule' });
    await sync.sync(waiting, context);
    expect([provisioner.provisionCalls.length, rescheduled.length]).toEqual([1, 1]);

    // The informer has not delivered the patch yet: the cached claim still names node-1.
    await sync.sync(waiting, context);
    expect(provisioner.provisionCalls).toHaveLength(1);

    provisioner.provisionResult = (options) => ({ pv: volumeFor(options) });
    const patched = { ...waiting, metadata: { ...waiting.metadata, resourceVersion: '11' } };
    await sync.sync(patched, context);
    expect(provisioner.provisionCalls).toHaveLength(2);
  });
});
