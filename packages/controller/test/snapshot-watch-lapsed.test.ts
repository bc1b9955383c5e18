/**
 * A snapshot whose pass met a closed fence while the term goes on (the fence closes for a moment when
 * the event loop stalls) is tried again after its back-off, not dropped until the next resync.
 */
import { expect, it } from 'vitest';
import { LeadershipLapsedError } from '../src/leader-election/lease-fence.ts';
import { directorySnapshots } from '../src/snapshot/directory-snapshot.ts';
import { type SnapshotSync, watchSnapshots } from '../src/snapshot/snapshot-watch.ts';
import { FakeKubeApi } from '../src/testing/fake-api.ts';
import { operationContext } from '../src/testing/provision-fixtures.ts';
import { eventually } from '../src/testing/wait.ts';

it('tries a snapshot again after its pass met a closed fence while the term goes on', async () => {
  const api = new FakeKubeApi();
  const snapshots = api.resource(directorySnapshots);
  await snapshots.create(
    {
      metadata: { name: 'snap', namespace: 'team-a' },
      spec: { source: { persistentVolumeClaimName: 'src' } },
    },
    { namespace: 'team-a' },
  );
  const term = new AbortController();
  let passes = 0;
  const reconcile = async (): Promise<SnapshotSync> => {
    passes += 1;
    if (passes === 1) throw new LeadershipLapsedError('leadership is not confirmed (stalled event loop)');
    return 'settled';
  };
  const watching = watchSnapshots(
    snapshots,
    reconcile,
    { ...operationContext(), signal: term.signal },
    // No resync within the test: the second pass can only be the retry.
    { resyncIntervalMs: 60 * 60_000, retryBaseMs: 5 },
  );
  await eventually(() => expect(passes).toBe(2));
  term.abort();
  await watching;
  expect(passes).toBe(2);
});
