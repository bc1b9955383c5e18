/**
 * The three PATCH formats, applied to objects in wire form. All return a new value and leave their
 * inputs untouched.
 *
 * - `merge`: RFC 7386 JSON merge patch (`null` deletes, objects merge, everything else replaces).
 * - `strategic`: merge patch plus the strategic-merge rules of the fields the library writes:
 *   `metadata.finalizers` is a set (union, order kept), `metadata.ownerReferences` merges by `uid`,
 *   `$deleteFromPrimitiveList/<list>` removes values from such a list, and a map with
 *   `$patch: replace` / `$patch: delete` replaces / deletes the map. Every other list is replaced, as
 *   for atomic lists; merge keys of other lists (containers, volumes…) are not modelled.
 * - `json`: RFC 6902 JSON patch (`add`, `remove`, `replace`, `move`, `copy`, `test`).
 */
import { isDeepStrictEqual } from 'node:util';
import { statusError } from './status-error.ts';

type Json = unknown;
type JsonObject = Record<string, Json>;

function isObject(value: Json): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function clone<T>(value: T): T {
  return structuredClone(value);
}

/** RFC 7386. */
export function applyMergePatch(target: Json, patch: Json): Json {
  if (!isObject(patch)) return clone(patch);
  const result: JsonObject = isObject(target) ? clone(target) : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = applyMergePatch(result[key], value);
  }
  return result;
}

/** Lists merged as sets or by key, by their path from the object root. */
const mergeLists: Readonly<Record<string, { readonly key?: string }>> = {
  'metadata.finalizers': {},
  'metadata.ownerReferences': { key: 'uid' },
};

const deletePrefix = '$deleteFromPrimitiveList/';
const setOrderPrefix = '$setElementOrder/';

/** Strategic merge patch for the fields listed in the module comment. */
export function applyStrategicMergePatch(target: Json, patch: Json): Json {
  return strategicMerge(target, patch, '');
}

function strategicMerge(target: Json, patch: Json, path: string): Json {
  if (!isObject(patch)) return clone(patch);
  const directive = patch.$patch;
  if (directive === 'delete') return undefined;
  const result: JsonObject = isObject(target) && directive !== 'replace' ? clone(target) : {};
  for (const [key, value] of Object.entries(patch)) {
    if (key === '$patch' || key.startsWith(setOrderPrefix) || key.startsWith(deletePrefix)) continue;
    const childPath = path === '' ? key : `${path}.${key}`;
    const list = mergeLists[childPath];
    if (value === null) {
      delete result[key];
    } else if (list !== undefined && Array.isArray(value)) {
      result[key] = mergeList(result[key], value, list.key);
    } else {
      const merged = strategicMerge(result[key], value, childPath);
      if (merged === undefined) delete result[key];
      else result[key] = merged;
    }
  }
  for (const [key, value] of Object.entries(patch)) {
    if (!key.startsWith(deletePrefix) || !Array.isArray(value)) continue;
    const field = key.slice(deletePrefix.length);
    const current = result[field];
    if (!Array.isArray(current)) continue;
    const remaining = current.filter((item) => !value.includes(item));
    if (remaining.length === 0) delete result[field];
    else result[field] = remaining;
  }
  return result;
}

function mergeList(current: Json, patch: readonly Json[], mergeKey: string | undefined): Json[] {
  const result = Array.isArray(current) ? clone(current) : [];
  for (const item of patch) {
    if (mergeKey === undefined) {
      if (!result.includes(item)) result.push(clone(item));
      continue;
    }
    const id = isObject(item) ? item[mergeKey] : undefined;
    const index = result.findIndex((existing) => isObject(existing) && existing[mergeKey] === id);
    if (isObject(item) && item.$patch === 'delete') {
      if (index >= 0) result.splice(index, 1);
    } else if (index >= 0) {
      result[index] = applyMergePatch(result[index], item);
    } else {
      result.push(clone(item));
    }
  }
  return result;
}

/** One RFC 6902 operation. */
export interface JsonPatchOperation {
  readonly op: 'add' | 'remove' | 'replace' | 'move' | 'copy' | 'test';
  readonly path: string;
  readonly value?: unknown;
  readonly from?: string;
}

function invalidPatch(message: string): Error {
  return statusError('Invalid', `invalid JSON patch: ${message}`);
}

function parsePointer(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw invalidPatch(`path ${JSON.stringify(pointer)} must start with /`);
  return pointer
    .slice(1)
    .split('/')
    .map((token) => token.replaceAll('~1', '/').replaceAll('~0', '~'));
}

function parentOf(root: Json, tokens: readonly string[], pointer: string): { parent: Json; last: string } {
  let parent: Json = root;
  for (const token of tokens.slice(0, -1)) {
    parent = Array.isArray(parent) ? parent[Number(token)] : isObject(parent) ? parent[token] : undefined;
    if (parent === undefined) throw invalidPatch(`path ${JSON.stringify(pointer)} does not exist`);
  }
  return { parent, last: tokens.at(-1) ?? '' };
}

function getAt(root: Json, pointer: string): Json {
  const tokens = parsePointer(pointer);
  if (tokens.length === 0) return root;
  const { parent, last } = parentOf(root, tokens, pointer);
  const value = Array.isArray(parent) ? parent[Number(last)] : isObject(parent) ? parent[last] : undefined;
  if (value === undefined) throw invalidPatch(`path ${JSON.stringify(pointer)} does not exist`);
  return value;
}

function arrayIndex(array: readonly Json[], token: string, allowEnd: boolean, pointer: string): number {
  const index = token === '-' && allowEnd ? array.length : Number(token);
  const max = allowEnd ? array.length : array.length - 1;
  if (!/^(0|[1-9]\d*)$/.test(token) && !(token === '-' && allowEnd)) {
    throw invalidPatch(`bad array index in ${JSON.stringify(pointer)}`);
  }
  if (index > max) throw invalidPatch(`array index out of range in ${JSON.stringify(pointer)}`);
  return index;
}

/** Returns the new root. */
function addAt(root: Json, pointer: string, value: Json): Json {
  const tokens = parsePointer(pointer);
  if (tokens.length === 0) return clone(value);
  const { parent, last } = parentOf(root, tokens, pointer);
  if (Array.isArray(parent)) parent.splice(arrayIndex(parent, last, true, pointer), 0, clone(value));
  else if (isObject(parent)) parent[last] = clone(value);
  else throw invalidPatch(`path ${JSON.stringify(pointer)} does not exist`);
  return root;
}

function removeAt(root: Json, pointer: string): void {
  const tokens = parsePointer(pointer);
  const { parent, last } = parentOf(root, tokens, pointer);
  if (Array.isArray(parent)) parent.splice(arrayIndex(parent, last, false, pointer), 1);
  else if (isObject(parent) && last in parent) delete parent[last];
  else throw invalidPatch(`path ${JSON.stringify(pointer)} does not exist`);
}

/** RFC 6902; fails with a 422 `Invalid` ApiError when an operation cannot apply, as the API server does. */
export function applyJsonPatch(target: Json, operations: unknown): Json {
  if (!Array.isArray(operations)) throw invalidPatch('the patch must be an array of operations');
  let root = clone(target);
  for (const operation of operations as JsonPatchOperation[]) {
    switch (operation.op) {
      case 'add':
        root = addAt(root, operation.path, operation.value);
        break;
      case 'remove':
        removeAt(root, operation.path);
        break;
      case 'replace':
        getAt(root, operation.path);
        if (parsePointer(operation.path).length === 0) {
          root = clone(operation.value);
        } else {
          removeAt(root, operation.path);
          root = addAt(root, operation.path, operation.value);
        }
        break;
      case 'move': {
        const value = getAt(root, operation.from ?? '');
        removeAt(root, operation.from ?? '');
        root = addAt(root, operation.path, value);
        break;
      }
      case 'copy':
        root = addAt(root, operation.path, getAt(root, operation.from ?? ''));
        break;
      case 'test':
        if (!isDeepStrictEqual(getAt(root, operation.path), operation.value)) {
          throw invalidPatch(`test of ${JSON.stringify(operation.path)} failed`);
        }
        break;
      default:
        throw invalidPatch(`unknown operation ${JSON.stringify((operation as { op?: unknown }).op)}`);
    }
  }
  return root;
}
