// The event recorder against the real Events API: repeats become one Event whose count grows,
// the 10th distinct message of a reason starts an aggregate Event, and events about cluster-scoped
// objects land in `default`.
import { randomBytes } from 'node:crypto';
import type { CoreV1Event, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isNotFound } from '../src/client/api-error.ts';
import { resources } from '../src/client/resource-client.ts';
import { createEventRecorder, type EventRecorder } from '../src/events/event-recorder.ts';
import { useE2eCluster } from './support/e2e-cluster.ts';

const { env, client } = useE2eCluster();
const api = client();
const events = api.resource(resources.events);
// Unique per run, so Events left by earlier runs (they live an hour) are never counted.
const component = `e2e-recorder-${randomBytes(4).toString('hex')}`;
let namespace = '';
let recorder: EventRecorder;

beforeAll(async () => {
  namespace = await env.namespace('events');
  recorder = createEventRecorder({ events, component, host: 'e2e-host' });
});

afterAll(async () => {
  await recorder.close();
});

async function claim(name: string): Promise<V1PersistentVolumeClaim> {
  return api.resource(resources.persistentVolumeClaims).create({
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace },
    spec: {
      accessModes: ['ReadWriteOnce'],
      storageClassName: 'e2e-nobody',
      resources: { requests: { storage: '1Gi' } },
    },
  });
}

/** Events this recorder wrote about the object with `uid`, in `eventNamespace`. */
async function recorded(eventNamespace: string, uid: string | undefined): Promise<CoreV1Event[]> {
  const list = await events.list({ namespace: eventNamespace, fieldSelector: `involvedObject.uid=${uid}` });
  return list.items.filter((event) => event.source?.component === component);
}

describe('event recorder against kube-apiserver', () => {
  it('folds repeats of one event into a single Event whose count grows', async () => {
    const pvc = await claim('repeated');
    for (let i = 0; i < 6; i++) {
      recorder.event(pvc, 'Normal', 'Provisioning', 'External provisioner is provisioning volume');
    }
    await recorder.flush();

    const written = await recorded(namespace, pvc.metadata?.uid);
    expect(written).toHaveLength(1);
    expect(written[0]).toMatchObject({
      type: 'Normal',
      reason: 'Provisioning',
      message: 'External provisioner is provisioning volume',
      count: 6,
      involvedObject: { kind: 'PersistentVolumeClaim', name: 'repeated', namespace },
      source: { component, host: 'e2e-host' },
      reportingComponent: component,
      reportingInstance: 'e2e-host',
    });
    expect(written[0]?.lastTimestamp?.getTime()).toBeGreaterThanOrEqual(
      written[0]?.firstTimestamp?.getTime() ?? Number.POSITIVE_INFINITY,
    );
  });

  it('starts one aggregate Event at the 10th distinct message of a reason and counts on it', async () => {
    const pvc = await claim('aggregated');
    for (let i = 1; i <= 12; i++) {
      recorder.event(pvc, 'Warning', 'ProvisioningFailed', `failed to provision volume: attempt ${i}`);
    }
    await recorder.flush();

    const written = await recorded(namespace, pvc.metadata?.uid);
    const prefix = '(combined from similar events): ';
    const aggregates = written.filter((event) => event.message?.startsWith(prefix));
    const singles = written.filter((event) => !event.message?.startsWith(prefix));
    expect(singles.map((event) => event.count)).toEqual(Array.from({ length: 9 }, () => 1));
    expect(aggregates).toHaveLength(1);
    expect(aggregates[0]).toMatchObject({
      type: 'Warning',
      reason: 'ProvisioningFailed',
      count: 3,
      message: `${prefix}failed to provision volume: attempt 12`,
    });
  });

  it('writes events about a cluster-scoped object to the default namespace', async () => {
    const volumes = api.resource(resources.persistentVolumes);
    const pv = await volumes.create({
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: `e2e-recorder-${randomBytes(4).toString('hex')}` },
      spec: {
        capacity: { storage: '1Gi' },
        accessModes: ['ReadWriteOnce'],
        storageClassName: 'e2e-nobody',
        hostPath: { path: '/tmp/e2e-recorder' },
      },
    });
    try {
      recorder.event(pv, 'Normal', 'VolumeDeleted', 'deleted');
      recorder.event(pv, 'Normal', 'VolumeDeleted', 'deleted');
      await recorder.flush();
      const written = await recorded('default', pv.metadata?.uid);
      expect(written).toHaveLength(1);
      expect(written[0]).toMatchObject({
        count: 2,
        involvedObject: { kind: 'PersistentVolume', name: pv.metadata?.name },
      });
    } finally {
      await volumes.delete(pv.metadata?.name ?? '').catch((err: unknown) => {
        if (!isNotFound(err)) throw err;
      });
    }
  });
});
