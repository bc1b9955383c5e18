import { describe, expect, it } from 'vitest';
import { deletionHandlingMetaNamespaceKey, metaNamespaceKey } from '../src/informer/keys.ts';
import {
  DeletedFinalStateUnknown,
  isDeletedFinalStateUnknown,
  unwrapTombstone,
} from '../src/informer/tombstone.ts';
import { thing } from './support/scripted-resource-client.ts';

describe('informer keys and tombstones', () => {
  it('keys objects as namespace/name, or name when cluster-scoped', () => {
    expect(metaNamespaceKey(thing('a', '1'))).toBe('ns/a');
    expect(metaNamespaceKey({ metadata: { name: 'pv-1' } })).toBe('pv-1');
    expect(() => metaNamespaceKey({})).toThrow(TypeError);
  });

  it('keys a tombstone by its recorded key, not by the stale object inside', () => {
    const tombstone = new DeletedFinalStateUnknown('ns/renamed', thing('a', '1'));
    expect(deletionHandlingMetaNamespaceKey(tombstone)).toBe('ns/renamed');
    expect(deletionHandlingMetaNamespaceKey(thing('a', '1'))).toBe('ns/a');
  });

  it('recognises tombstones by brand, also from another copy of the package', () => {
    const foreign = { key: 'ns/a', obj: thing('a', '1') };
    Object.defineProperty(foreign, Symbol.for('@kube-provisioner/controller/DeletedFinalStateUnknown'), {
      value: true,
    });
    expect(isDeletedFinalStateUnknown(foreign)).toBe(true);
    expect(isDeletedFinalStateUnknown(thing('a', '1'))).toBe(false);
    expect(
      unwrapTombstone(new DeletedFinalStateUnknown('ns/a', thing('a', '7'))).metadata.resourceVersion,
    ).toBe('7');
    expect(unwrapTombstone(thing('b', '8')).metadata.name).toBe('b');
  });
});
