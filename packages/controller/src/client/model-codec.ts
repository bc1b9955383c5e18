/**
 * Conversion between the objects the library hands out (`@kubernetes/client-node`'s model types:
 * `Date` timestamps) and their JSON wire form. The real client and the in-memory fake both use it,
 * so both hand out the same shapes.
 *
 * client-node's `ObjectSerializer` does this by walking every field of a generated model class; it
 * costs ~30 MiB of RSS to import (every model of the API) and is the largest single item of a
 * decoding profile, and it drops fields its models do not know. The models the library uses differ
 * from plain JSON only in their date-time fields, so those are converted by path and everything
 * else is the parsed JSON itself. `test/model-codec.test.ts` checks the paths against client-node's
 * own model metadata, so a client-node upgrade that adds a date field fails a test.
 */

import type { V1Status } from '@kubernetes/client-node';
import type { KubeObject, ResourceDescriptor } from './resource-client.ts';

/** The wire (JSON) form of an object. */
export type WireObject = Record<string, unknown>;

/** A date-time field: property names from the object's root; `[]` steps into every array element. */
export type DateFieldPath = readonly string[];

/** `ObjectMeta`'s date-time fields: every object has them. */
const metadataDates: readonly DateFieldPath[] = [
  ['metadata', 'creationTimestamp'],
  ['metadata', 'deletionTimestamp'],
  ['metadata', 'managedFields', '[]', 'time'],
];

/**
 * Date-time fields (`Date` in client-node's models) by model name, for the resources of
 * `resources`. `V1MicroTime` fields (Lease acquire/renew times, an event's `eventTime`) stay
 * strings, as client-node's deserializer leaves them.
 */
export const modelDateFields: Readonly<Record<string, readonly DateFieldPath[]>> = {
  V1PersistentVolume: [...metadataDates, ['status', 'lastPhaseTransitionTime']],
  V1PersistentVolumeClaim: [
    ...metadataDates,
    ['status', 'conditions', '[]', 'lastProbeTime'],
    ['status', 'conditions', '[]', 'lastTransitionTime'],
  ],
  V1StorageClass: metadataDates,
  CoreV1Event: [...metadataDates, ['firstTimestamp'], ['lastTimestamp']],
  V1Lease: metadataDates,
  V1VolumeAttributesClass: metadataDates,
  V1Node: [
    ...metadataDates,
    ['spec', 'taints', '[]', 'timeAdded'],
    ['status', 'conditions', '[]', 'lastHeartbeatTime'],
    ['status', 'conditions', '[]', 'lastTransitionTime'],
  ],
};

/** The date-time fields of a descriptor's model; `ObjectMeta`'s for a model not listed. */
export function dateFieldsOf(model: string): readonly DateFieldPath[] {
  return modelDateFields[model] ?? metadataDates;
}

/** The object with `apiVersion` and `kind` filled in from the descriptor when absent; shares the rest. */
export function withTypeMeta<T extends KubeObject>(object: T, descriptor: ResourceDescriptor<T>): T {
  const { group, version, kind } = descriptor;
  return {
    ...object,
    apiVersion: object.apiVersion ?? (group === '' ? version : `${group}/${version}`),
    kind: object.kind ?? kind,
  };
}

/** The object's JSON form with `apiVersion` and `kind` filled in from the descriptor when absent. */
export function encodeObject<T extends KubeObject>(object: T, descriptor: ResourceDescriptor<T>): WireObject {
  // Through text, as on the wire: Dates become RFC 3339 strings, and nothing stays shared with
  // the caller's object.
  return JSON.parse(JSON.stringify(withTypeMeta(object, descriptor))) as WireObject;
}

/**
 * The model object of a JSON value, converted in place: its date-time fields become `Date`s. Pass a
 * value nobody else holds (just parsed, or a copy).
 */
export function decodeObject<T extends KubeObject>(wire: unknown, descriptor: ResourceDescriptor<T>): T {
  for (const path of dateFieldsOf(descriptor.model)) parseDates(wire, path, 0);
  return wire as T;
}

/** The `V1Status` model of a JSON value (its list metadata's `continue` is `_continue` there). */
export function decodeStatus(wire: unknown): V1Status {
  if (!isRecord(wire)) return wire as V1Status;
  const metadata = wire.metadata;
  if (!isRecord(metadata) || !('continue' in metadata)) return wire as V1Status;
  const { continue: token, ...rest } = metadata;
  return { ...wire, metadata: { ...rest, _continue: token } } as V1Status;
}

/** Parses, in place, the date-time strings at `path[at…]` below `value`; returns the parsed leaf. */
function parseDates(value: unknown, path: DateFieldPath, at: number): unknown {
  if (at === path.length) return typeof value === 'string' ? new Date(value) : value;
  const step = path[at] as string;
  if (step === '[]') {
    if (Array.isArray(value)) {
      for (let index = 0; index < value.length; index++)
        value[index] = parseDates(value[index], path, at + 1);
    }
  } else if (isRecord(value) && step in value) {
    value[step] = parseDates(value[step], path, at + 1);
  }
  return value;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
