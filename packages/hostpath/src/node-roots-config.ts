/**
 * The node roots file (`--roots-config`): local-path-provisioner's `config.json` (its `nodePathMap`), so
 * each node of one DaemonSet gets its own disks from one ConfigMap. A path may also carry a name
 * and labels, as `--root` gives them, or be marked retired; a bare path is named after its last segment.
 */
import { isAbsolute, posix, resolve } from 'node:path';
import { checkRoots, type NamedRoot, rootNamePattern } from './root-placement.ts';

/** The `node` of the entry whose paths serve every node the file does not list. */
export const defaultNodeEntry = 'DEFAULT_PATH_FOR_NON_LISTED_NODES';

/** One node's entry of the file: its roots, none for a node that takes no new volume. */
export interface NodeRootsEntry {
  /** A node name, or {@link defaultNodeEntry}. */
  readonly node: string;
  /** The roots new volumes go to. */
  readonly roots: readonly NamedRoot[];
  /**
   * Roots marked `"retired": true`: no new volume goes there, but their volumes are still served,
   * across restarts too, until the disk is taken out of the file.
   */
  readonly retired: readonly NamedRoot[];
}

/** The roots of this node under a file: those of its entry, else of the default one. */
export interface NodeRootsSelection {
  /** The entry that applies: the node's name, {@link defaultNodeEntry}, or `undefined` for none. */
  readonly entry: string | undefined;
  /** The node's roots; none when no entry applies or the entry lists no path. */
  readonly roots: readonly NamedRoot[];
  /** The node's retired roots (see {@link NodeRootsEntry.retired}). */
  readonly retired: readonly NamedRoot[];
}

/**
 * Reads the file's text: every entry is checked (one file serves every node, so an error in any
 * entry refuses it on all of them alike).
 *
 * @throws Error saying what is wrong and where: not JSON, no `nodePathMap` list, a node given twice
 * or without a name, a path not absolute or `/` or given twice, a bad name or label, roots one
 * inside another, or a local-path setting this provisioner has no equivalent of.
 */
export function parseNodeRootsConfig(text: string): readonly NodeRootsEntry[] {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (err) {
    throw new Error(`not valid JSON: ${(err as Error).message}`);
  }
  if (!isObject(document)) throw new Error('must be a JSON object with a "nodePathMap" list');
  refuseUnsupported(document);
  const map = document.nodePathMap;
  if (!Array.isArray(map)) throw new Error('"nodePathMap" must be a list of {"node", "paths"} entries');
  const nodes = new Set<string>();
  return map.map((item: unknown, index): NodeRootsEntry => {
    if (!isObject(item) || typeof item.node !== 'string' || item.node === '') {
      throw new Error(`nodePathMap[${index}] must have a "node" name`);
    }
    const { node } = item;
    if (nodes.has(node)) throw new Error(`node ${node} is listed twice`);
    nodes.add(node);
    // local-path reads an entry without "paths" as one with none.
    const paths: unknown = item.paths ?? [];
    if (!Array.isArray(paths)) throw new Error(`the "paths" of node ${node} must be a list`);
    const given = paths.map((path: unknown) => rootOf(path, node));
    const all = namedRoots(given, node);
    if (all.length > 0) {
      try {
        checkRoots(all);
      } catch (err) {
        throw new Error(`node ${node}: ${(err as Error).message}`);
      }
    }
    return {
      node,
      roots: all.filter((_, at) => !given[at]?.retired),
      retired: all.filter((_, at) => given[at]?.retired),
    };
  });
}

/** The roots `node` gets from `entries`: its own entry's, else the default entry's, else none. */
export function rootsOfNode(entries: readonly NodeRootsEntry[], node: string): NodeRootsSelection {
  const entry =
    entries.find((item) => item.node === node) ?? entries.find((item) => item.node === defaultNodeEntry);
  return { entry: entry?.node, roots: entry?.roots ?? [], retired: entry?.retired ?? [] };
}

/** Settings of local-path's file that would mean something else here: refused, not ignored. */
function refuseUnsupported(document: Readonly<Record<string, unknown>>): void {
  const shared = document.sharedFileSystemPath;
  if (typeof shared === 'string' && shared !== '') {
    throw new Error(
      '"sharedFileSystemPath" is not read: a root every node mounts is shared mode (--mode=shared)',
    );
  }
  const classes = document.storageClassConfigs;
  if (isObject(classes) && Object.keys(classes).length > 0) {
    throw new Error(
      '"storageClassConfigs" is not read: a class chooses among the node\'s roots with its parameter "roots"',
    );
  }
}

/** A root as the file gives it; its name is `undefined` until derived from its path. */
interface GivenRoot {
  readonly name: string | undefined;
  readonly labels: readonly string[];
  readonly path: string;
  readonly retired: boolean;
}

/** One item of `paths`: `"/path"`, `"name:label=/path"` or `{"path", "name"?, "labels"?, "retired"?}`. */
function rootOf(item: unknown, node: string): GivenRoot {
  let name: string | undefined;
  let labels: readonly string[] = [];
  let retired = false;
  let path: unknown;
  if (typeof item === 'string') {
    const at = item.indexOf('=');
    path = at < 0 ? item : item.slice(at + 1);
    if (at >= 0) [name = '', ...labels] = item.slice(0, at).split(':');
  } else if (isObject(item)) {
    path = item.path;
    if (item.name !== undefined) {
      if (typeof item.name !== 'string') throw new Error(`a "name" on node ${node} must be a string`);
      name = item.name;
    }
    if (item.labels !== undefined) {
      if (!Array.isArray(item.labels) || !item.labels.every((label) => typeof label === 'string')) {
        throw new Error(`the "labels" of a path on node ${node} must be a list of strings`);
      }
      labels = item.labels;
    }
    if (item.retired !== undefined) {
      if (typeof item.retired !== 'boolean')
        throw new Error(`a "retired" on node ${node} must be true or false`);
      retired = item.retired;
    }
  }
  if (typeof path !== 'string' || !isAbsolute(path) || resolve(path) === '/') {
    throw new Error(`a path on node ${node} must be absolute and not /, got ${JSON.stringify(path ?? item)}`);
  }
  return { name, labels, path: resolve(path), retired };
}

/**
 * Names the roots without one after their path's last segment (`/data1` is `data1`), made a DNS
 * label; a name already taken gets `-2`, `-3`, … in the order of the list, so a file names alike
 * every time it is read.
 */
function namedRoots(given: readonly GivenRoot[], node: string): NamedRoot[] {
  const paths = new Set<string>();
  const taken = new Set<string>();
  for (const root of given) {
    if (paths.has(root.path)) throw new Error(`path ${root.path} is given twice on node ${node}`);
    paths.add(root.path);
    for (const name of [root.name, ...root.labels]) if (name !== undefined) taken.add(name);
  }
  return given.map((root) => {
    let name = root.name;
    if (name === undefined) {
      const base = nameFromPath(root.path);
      name = base;
      for (let n = 2; taken.has(name); n += 1) name = `${base.slice(0, 60)}-${n}`;
      taken.add(name);
    }
    return { name, ...(root.labels.length === 0 ? {} : { labels: root.labels }), path: root.path };
  });
}

function nameFromPath(path: string): string {
  const name = posix
    .basename(path)
    .toLowerCase()
    .replace(/[^a-z0-9-]+/gu, '-')
    .slice(0, 63)
    .replace(/^-+|-+$/gu, '');
  return rootNamePattern.test(name) ? name : 'root';
}

function isObject(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
