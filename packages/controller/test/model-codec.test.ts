import * as models from '@kubernetes/client-node/dist/gen/models/all.js';
import { ObjectSerializer } from '@kubernetes/client-node/dist/gen/models/ObjectSerializer.js';
import { describe, expect, it } from 'vitest';
import { decodeObject, decodeStatus, encodeObject, modelDateFields } from '../src/client/model-codec.ts';
import { resources } from '../src/client/resource-client.ts';

interface Attribute {
  readonly name: string;
  readonly baseName: string;
  readonly type: string;
}

/** Every `Date` field client-node's generated metadata gives a model, as the codec spells paths. */
function clientNodeDatePaths(
  model: string,
  prefix: readonly string[] = [],
  seen: readonly string[] = [],
): string[] {
  const modelClass = (models as Record<string, unknown>)[model] as
    | { getAttributeTypeMap?: () => readonly Attribute[] }
    | undefined;
  if (modelClass?.getAttributeTypeMap === undefined || seen.includes(model)) return [];
  const paths: string[] = [];
  for (const attribute of modelClass.getAttributeTypeMap()) {
    let type = attribute.type;
    const path = [...prefix, attribute.baseName];
    const array = /^Array<(.+)>$/.exec(type);
    if (array?.[1] !== undefined) {
      type = array[1];
      path.push('[]');
    }
    if (type === 'Date') paths.push(path.join('.'));
    else paths.push(...clientNodeDatePaths(type, path, [...seen, model]));
  }
  return paths;
}

const claimWire = {
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: {
    name: 'data',
    namespace: 'apps',
    creationTimestamp: '2026-11-24T01:02:03Z',
    annotations: { 'volume.kubernetes.io/storage-provisioner': 'example.com/p' },
    managedFields: [{ manager: 'kubectl', time: '2026-11-24T01:02:04Z' }, { manager: 'kcm' }],
  },
  spec: { storageClassName: 'fast', futureField: { kept: true } },
  status: {
    phase: 'Pending',
    conditions: [{ type: 'Resizing', lastTransitionTime: '2026-11-24T01:02:05Z' }],
  },
};

describe('the model codec', () => {
  it('knows every date-time field client-node models for the resources the library uses', () => {
    for (const descriptor of Object.values(resources)) {
      const ours = (modelDateFields[descriptor.model] ?? []).map((path) => path.join('.'));
      expect(ours.sort(), descriptor.model).toEqual(clientNodeDatePaths(descriptor.model).sort());
    }
  });

  it('decodes what client-node decodes, keeping fields its models do not know', () => {
    const decoded = decodeObject(structuredClone(claimWire), resources.persistentVolumeClaims);
    const expected = ObjectSerializer.deserialize(structuredClone(claimWire), 'V1PersistentVolumeClaim', '');
    expect(JSON.parse(JSON.stringify(decoded))).toMatchObject(JSON.parse(JSON.stringify(expected)));
    expect(decoded.metadata?.creationTimestamp).toEqual(new Date('2026-11-24T01:02:03Z'));
    expect(decoded.metadata?.managedFields?.[0]?.time).toEqual(new Date('2026-11-24T01:02:04Z'));
    expect(decoded.status?.conditions?.[0]?.lastTransitionTime).toEqual(new Date('2026-11-24T01:02:05Z'));
    expect((decoded.spec as Record<string, unknown>).futureField).toEqual({ kept: true });
  });

  it('converts the value it is given in place', () => {
    const parsed = structuredClone(claimWire);
    const decoded = decodeObject(parsed, resources.persistentVolumeClaims);
    expect(decoded).toBe(parsed);
    expect(parsed.metadata.creationTimestamp).toBeInstanceOf(Date);
  });

  it('encodes dates as RFC 3339 and fills in apiVersion and kind', () => {
    const decoded = decodeObject(structuredClone(claimWire), resources.persistentVolumeClaims);
    const { apiVersion: _, kind: __, ...bare } = decoded;
    const wire = encodeObject(bare, resources.persistentVolumeClaims);
    expect(wire).toEqual({
      ...claimWire,
      metadata: {
        ...claimWire.metadata,
        creationTimestamp: '2026-11-24T01:02:03.000Z',
        managedFields: [{ manager: 'kubectl', time: '2026-11-24T01:02:04.000Z' }, { manager: 'kcm' }],
      },
      status: {
        phase: 'Pending',
        conditions: [{ type: 'Resizing', lastTransitionTime: '2026-11-24T01:02:05.000Z' }],
      },
    });
  });

  it("gives an unknown model ObjectMeta's dates and passes the rest through", () => {
    const pod = decodeObject(
      {
        metadata: { name: 'p', creationTimestamp: '2026-11-24T00:00:00Z' },
        status: { startTime: '2026-11-24T00:00:01Z' },
      },
      { group: '', version: 'v1', plural: 'pods', kind: 'Pod', namespaced: true, model: 'V1Pod' },
    );
    expect(pod.metadata?.creationTimestamp).toBeInstanceOf(Date);
    expect((pod as { status?: { startTime?: unknown } }).status?.startTime).toBe('2026-11-24T00:00:01Z');
  });

  it('names a Status list continue token as client-node does', () => {
    expect(decodeStatus({ kind: 'Status', metadata: { continue: 'abc' }, code: 410 })).toEqual({
      kind: 'Status',
      metadata: { _continue: 'abc' },
      code: 410,
    });
  });
});
