/**
 * The reschedule's `update` mode (Go's PUT), as v13.1.0 changed it: the claim is read afresh and put
 * back without the selected node, again on a conflict, and not at all when the annotation is gone.
 */
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { resources } from '../src/client/resource-client.ts';
import { type RescheduleConfig, rescheduleClaim } from '../src/internal/reschedule.ts';
import { FakeKubeApi } from '../src/testing/fake-api.ts';
import { statusError } from '../src/testing/status-error.ts';
import { realClock } from '../src/util/clock.ts';
import { annSelectedNode } from '../src/wire-names.ts';
import { newClaim, provisionerName } from './controller-fixtures.ts';

function setup(): { api: FakeKubeApi; config: RescheduleConfig; cached: V1PersistentVolumeClaim } {
  const api = new FakeKubeApi();
  const [cached] = api.seed(
    resources.persistentVolumeClaims,
    newClaim('claim-1', 'uid-1', 'class-1', provisionerName, '', { [annSelectedNode]: 'node-1' }),
  );
  if (cached === undefined) throw new Error('not seeded');
  const config: RescheduleConfig = {
    claims: api.resource(resources.persistentVolumeClaims),
    mode: 'update',
    clock: realClock,
    apiRequestTimeoutMs: 30_000,
  };
  return { api, config, cached };
}

const stored = (api: FakeKubeApi) => api.objects(resources.persistentVolumeClaims, 'default')[0];
const verbs = (api: FakeKubeApi) =>
  api
    .actions()
    .filter((action) => action.resource === 'persistentvolumeclaims')
    .map((action) => action.verb);

describe('rescheduleClaim in update mode', () => {
  it('puts back the claim as stored now, keeping a change made since it was cached', async () => {
    const { api, config, cached } = setup();
    const claims = api.resource(resources.persistentVolumeClaims);
    const current = await claims.get('claim-1', { namespace: 'default' });
    await claims.update(
      { ...current, metadata: { ...current.metadata, labels: { tier: 'db' } } },
      { namespace: 'default' },
    );
    api.clearActions();

    await rescheduleClaim(config, cached, new AbortController().signal);
    expect(stored(api)?.metadata?.annotations?.[annSelectedNode]).toBeUndefined();
    expect(stored(api)?.metadata?.labels).toEqual({ tier: 'db' });
    expect(verbs(api)).toEqual(['get', 'update']);
  });

  it('starts over from a fresh read after a conflict', async () => {
    const { api, config, cached } = setup();
    api.failNext({
      verb: 'update',
      resource: 'persistentvolumeclaims',
      error: statusError(
        'Conflict',
        'the object has been modified; please apply your changes to the latest version',
      ),
    });
    await rescheduleClaim(config, cached, new AbortController().signal);
    expect(stored(api)?.metadata?.annotations?.[annSelectedNode]).toBeUndefined();
    expect(verbs(api)).toEqual(['get', 'update', 'get', 'update']);
  });

  it('gives up after five conflicts, naming the claim', async () => {
    const { api, config, cached } = setup();
    api.failNext({
      verb: 'update',
      resource: 'persistentvolumeclaims',
      error: statusError('Conflict', 'the object has been modified'),
      times: 5,
    });
    await expect(rescheduleClaim(config, cached, new AbortController().signal)).rejects.toThrow(
      `delete annotation 'annSelectedNode' for PersistentVolumeClaim "default/claim-1"`,
    );
    expect(verbs(api).filter((verb) => verb === 'update')).toHaveLength(5);
    expect(stored(api)?.metadata?.annotations?.[annSelectedNode]).toBe('node-1');
  });

  it('writes nothing when the selected node is already gone', async () => {
    const { api, config, cached } = setup();
    await api
      .resource(resources.persistentVolumeClaims)
      .patch('claim-1', { metadata: { annotations: { [annSelectedNode]: null } } }, 'merge', {
        namespace: 'default',
      });
    api.clearActions();
    await rescheduleClaim(config, cached, new AbortController().signal);
    expect(verbs(api)).toEqual(['get']);
  });
});
