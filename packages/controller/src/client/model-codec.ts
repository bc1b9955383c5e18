/**
 * Conversion between `@kubernetes/client-node` model objects (`Date` timestamps) and their JSON wire
 * form, by the `ObjectSerializer` type name of a {@link ResourceDescriptor}. The real client and the
 * in-memory fake both use it, so both hand out the same shapes. Unknown model names pass through
 * as plain JSON.
 */

import type { V1Status } from '@kubernetes/client-node';
import { ObjectSerializer } from '@kubernetes/client-node/dist/gen/models/ObjectSerializer.js';
import type { KubeObject, ResourceDescriptor } from './resource-client.ts';

/** The wire (JSON) form of an object. */
export type WireObject = Record<string, unknown>;

/** The object's JSON form with `apiVersion` and `kind` filled in from the descriptor when absent. */
export function encodeObject<T extends KubeObject>(object: T, descriptor: ResourceDescriptor<T>): WireObject {
  const { group, version, kind, model } = descriptor;
  const typed = {
    ...object,
    apiVersion: object.apiVersion ?? (group === '' ? version : `${group}/${version}`),
    kind: object.kind ?? kind,
  };
  // The round trip through text also detaches every nested value from the caller's object.
  return JSON.parse(JSON.stringify(ObjectSerializer.serialize(typed, model, ''))) as WireObject;
}

/** The model object of a JSON value. Untyped nested maps are shared with `wire`, so pass a fresh value. */
export function decodeObject<T extends KubeObject>(wire: unknown, descriptor: ResourceDescriptor<T>): T {
  return ObjectSerializer.deserialize(wire, descriptor.model, '') as T;
}

/** The `V1Status` model of a JSON value. */
export function decodeStatus(wire: unknown): V1Status {
  return ObjectSerializer.deserialize(wire, 'V1Status', '') as V1Status;
}
