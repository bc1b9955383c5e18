import type { V1PersistentVolume, V1PersistentVolumeClaim, V1StorageClass } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { resources } from '../src/client/resource-client.ts';
import { ClaimResize } from '../src/internal/claim-resize.ts';
import { createResizeMetrics } from '../src/internal/resize-metrics.ts';
import type { WorkFence } from '../src/internal/work-fence.ts';
import { isLeadershipLapsedError, LeadershipLapsedError } from '../src/leader-election/lease-fence.ts';
import type { ExpandOptions, ExpandResult, OperationContext } from '../src/provisioner.ts';
import { FakeKubeApi } from '../src/testing/fake-api.ts';
import { realClock } from '../src/util/clock.ts';
import { silentLogger } from '../src/util/logger.ts';
import { annDynamicallyProvisioned } from '../src/wire-names.ts';

const provisionerName = 'example.com/fixture';

/** A fence the test opens and closes. */
class TestFence implements WorkFence {
  open = true;
  readonly assertLeader = (): void => {
    if (!this.open) throw new LeadershipLapsedError('the term ended');
  };
  readonly abandoned = (): boolean => !this.open;
}

function setup(
  options: {
    allowVolumeExpansion?: boolean;
    provisionedBy?: string;
    shouldExpand?: (pv: V1PersistentVolume) => boolean;
  } = {},
) {
  const api = new FakeKubeApi();
  const [storageClass] = api.seed(resources.storageClasses, {
    metadata: { name: 'fast' },
    provisioner: provisionerName,
    allowVolumeExpansion: options.allowVolumeExpansion ?? true,
  } satisfies V1StorageClass);
  const [claim] = api.seed(resources.persistentVolumeClaims, {
    metadata: { name: 'data', namespace: 'ns', uid: 'claim-uid' },
    spec: { storageClassName: 'fast', volumeName: 'pv-1', resources: { requests: { storage: '2Gi' } } },
    status: { phase: 'Bound', capacity: { storage: '1Gi' } },
  } satisfies V1PersistentVolumeClaim);
  const [volume] = api.seed(resources.persistentVolumes, {
    metadata: {
      name: 'pv-1',
      annotations: { [annDynamicallyProvisioned]: options.provisionedBy ?? provisionerName },
    },
    spec: { capacity: { storage: '1Gi' }, claimRef: { namespace: 'ns', name: 'data', uid: 'claim-uid' } },
  } satisfies V1PersistentVolume);
  const fence = new TestFence();
  const events: string[] = [];
  const expandCalls: ExpandOptions[] = [];
  let expandResult: (options: ExpandOptions) => ExpandResult = (expandOptions) => ({
    capacity: expandOptions.capacity,
  });
  const resize = new ClaimResize({
    expand: async (expandOptions) => {
      expandCalls.push(expandOptions);
      return expandResult(expandOptions);
    },
    shouldExpand: options.shouldExpand,
    provisionerName,
    knownNames: new Set([provisionerName]),
    claims: api.resource(resources.persistentVolumeClaims),
    volumes: api.resource(resources.persistentVolumes),
    getVolume: (name) => (name === volume?.metadata?.name ? volume : undefined),
    getClass: (name) => (name === storageClass?.metadata?.name ? storageClass : undefined),
    recordEvent: (_object, type, reason) => events.push(`${type} ${reason}`),
    metrics: createResizeMetrics(new Registry()),
    clock: realClock,
    apiRequestTimeoutMs: 5_000,
    fence,
  });
  const context: OperationContext = {
    signal: new AbortController().signal,
    assertLeader: fence.assertLeader,
    logger: silentLogger,
  };
  if (claim === undefined) throw new Error('seed failed');
  api.clearActions();
  return {
    api,
    claim,
    fence,
    events,
    expandCalls,
    resize,
    context,
    answer: (result: (options: ExpandOptions) => ExpandResult) => {
      expandResult = result;
    },
  };
}

const writes = (api: FakeKubeApi) =>
  api
    .actions()
    .filter((action) => action.verb === 'patch')
    .map((action) => `${action.resource}/${action.name}`);

describe('ClaimResize', () => {
  it('records the size, expands, then writes the PV and the claim', async () => {
    const { api, claim, events, expandCalls, resize, context } = setup();
    await resize.sync(claim, context);

    expect(expandCalls.map((call) => call.capacity)).toEqual(['2Gi']);
    expect(writes(api)).toEqual([
      'persistentvolumeclaims/data',
      'persistentvolumes/pv-1',
      'persistentvolumeclaims/data',
    ]);
    expect(events).toEqual(['Normal Resizing', 'Normal VolumeResizeSuccessful']);
    const [stored] = api.objects(resources.persistentVolumeClaims, 'ns');
    expect(stored?.status?.capacity).toEqual({ storage: '2Gi' });
    expect(stored?.status?.allocatedResources).toEqual({ storage: '2Gi' });
    expect(api.objects(resources.persistentVolumes)[0]?.spec?.capacity).toEqual({ storage: '2Gi' });
  });

  it('leaves a volume its provisioner declines to another instance: no expand, write or event', async () => {
    const declined: string[] = [];
    const { api, claim, events, expandCalls, resize, context } = setup({
      shouldExpand: (pv) => {
        declined.push(pv.metadata?.name ?? '');
        return false;
      },
    });
    await resize.sync(claim, context);
    expect(declined).toEqual(['pv-1']);
    expect(expandCalls).toEqual([]);
    expect(writes(api)).toEqual([]);
    expect(events).toEqual([]);
  });

  it('neither calls expand nor writes anything once the term has ended', async () => {
    const { api, claim, fence, events, expandCalls, resize, context } = setup();
    fence.open = false;
    await expect(resize.sync(claim, context)).rejects.toSatisfy(isLeadershipLapsedError);
    expect(expandCalls).toEqual([]);
    expect(writes(api)).toEqual([]);
    expect(events).toEqual([]);
  });

  it('drops an expansion that returns after the term ended: no PV or claim capacity written', async () => {
    const { api, claim, fence, events, resize, context, answer } = setup();
    answer((options) => {
      fence.open = false;
      return { capacity: options.capacity };
    });
    await expect(resize.sync(claim, context)).rejects.toSatisfy(isLeadershipLapsedError);
    expect(writes(api)).toEqual(['persistentvolumeclaims/data']);
    expect(events).toEqual(['Normal Resizing']);
    expect(api.objects(resources.persistentVolumes)[0]?.spec?.capacity).toEqual({ storage: '1Gi' });
  });

  it('refuses an expansion that returns less than asked, and retries it', async () => {
    const { api, claim, events, resize, context, answer } = setup();
    answer(() => ({ capacity: '1536Mi' }));
    await expect(resize.sync(claim, context)).rejects.toThrow(
      'expand returned capacity 1536Mi, less than the requested 2Gi',
    );
    expect(events).toEqual(['Normal Resizing', 'Warning VolumeResizeFailed']);
    expect(writes(api)).toEqual(['persistentvolumeclaims/data']);
  });

  it('leaves claims of classes without allowVolumeExpansion, and PVs of other provisioners, alone', async () => {
    for (const options of [{ allowVolumeExpansion: false }, { provisionedBy: 'example.com/other' }]) {
      const { api, claim, expandCalls, resize, context } = setup(options);
      await resize.sync(claim, context);
      expect(expandCalls).toEqual([]);
      expect(writes(api)).toEqual([]);
    }
  });
});
