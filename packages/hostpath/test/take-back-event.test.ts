import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { EventRecorder } from '@kube-provisioner/controller/events';
import { describe, expect, it } from 'vitest';
import { HostPathProvisioner } from '../src/hostpath-provisioner.ts';
import { annTakeBackFrom } from '../src/take-back.ts';
import {
  claim,
  context,
  failed,
  provisioned,
  provisionOptions,
  released,
  storageClass,
  temporaryRoot,
} from './fixtures.ts';

const retain = storageClass({ onDelete: 'retain' });

/** Records events as `<claim name> <type> <reason>: <message>`. */
function eventLog(): Pick<EventRecorder, 'event'> & { readonly lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    event(object, type, reason, message) {
      lines.push(`${object.metadata?.name} ${type} ${reason}: ${message}`);
    },
  };
}

describe('the VolumeTakenBack event', () => {
  it('tells the new claim, once, which PV its data came from', async () => {
    await using root = await temporaryRoot();
    const events = eventLog();
    const hostpath = new HostPathProvisioner({ mode: 'shared', root: root.path, events });
    const oldClaim = claim({ name: 'old' });
    const old = provisioned(await hostpath.provision(provisionOptions(oldClaim, retain), context));
    await writeFile(join(old.spec?.hostPath?.path ?? '', 'data.txt'), 'kept');
    await hostpath.delete(released(old, oldClaim), context);
    const oldName = old.metadata?.name ?? '';
    const options = provisionOptions(
      claim({ name: 'new', annotations: { [annTakeBackFrom]: oldName } }),
      retain,
    );

    provisioned(await hostpath.provision(options, context));
    // A retried provision finds the data already in place and says nothing more.
    provisioned(await hostpath.provision(options, context));

    expect(events.lines).toEqual([
      expect.stringMatching(
        new RegExp(`^new Normal VolumeTakenBack: took back the data of PersistentVolume ${oldName} into `),
      ),
    ]);
  });

  it('is not emitted for a refused take-back or an empty volume', async () => {
    await using root = await temporaryRoot();
    const events = eventLog();
    const hostpath = new HostPathProvisioner({ mode: 'shared', root: root.path, events });
    const asking = claim({ name: 'new', annotations: { [annTakeBackFrom]: 'pvc-nothing-retained' } });

    failed(await hostpath.provision(provisionOptions(asking, retain), context), false);
    provisioned(await hostpath.provision(provisionOptions(claim({ name: 'plain' }), retain), context));

    expect(events.lines).toEqual([]);
  });
});
