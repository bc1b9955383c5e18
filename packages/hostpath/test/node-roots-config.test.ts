import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadAllYaml, type V1ConfigMap } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { defaultRoot } from '../src/cli-options.ts';
import { defaultNodeEntry, parseNodeRootsConfig, rootsOfNode } from '../src/node-roots-config.ts';

const localPathExample = JSON.stringify({
  nodePathMap: [
    { node: 'DEFAULT_PATH_FOR_NON_LISTED_NODES', paths: ['/opt/local-path-provisioner'] },
    { node: 'yasker-lp-dev1', paths: ['/opt/local-path-provisioner', '/data1'] },
    { node: 'yasker-lp-dev3', paths: [] },
  ],
});

const parseError = (document: unknown) => () => parseNodeRootsConfig(JSON.stringify(document));

describe('the node roots file', () => {
  it("reads local-path-provisioner's config.json, naming each path after its last segment", () => {
    const entries = parseNodeRootsConfig(localPathExample);
    expect(rootsOfNode(entries, 'yasker-lp-dev1')).toEqual({
      entry: 'yasker-lp-dev1',
      roots: [
        { name: 'local-path-provisioner', path: '/opt/local-path-provisioner' },
        { name: 'data1', path: '/data1' },
      ],
      retired: [],
    });
  });

  it('gives a node it does not list the default entry, and a node listed without paths no root', () => {
    const entries = parseNodeRootsConfig(localPathExample);
    expect(rootsOfNode(entries, 'other')).toEqual({
      entry: defaultNodeEntry,
      roots: [{ name: 'local-path-provisioner', path: '/opt/local-path-provisioner' }],
      retired: [],
    });
    expect(rootsOfNode(entries, 'yasker-lp-dev3')).toEqual({
      entry: 'yasker-lp-dev3',
      roots: [],
      retired: [],
    });
    const withoutDefault = parseNodeRootsConfig(
      JSON.stringify({ nodePathMap: [{ node: 'a', paths: ['/a'] }] }),
    );
    expect(rootsOfNode(withoutDefault, 'b')).toEqual({ entry: undefined, roots: [], retired: [] });
    // local-path writes an entry without "paths" in its own log; it has none.
    expect(rootsOfNode(parseNodeRootsConfig('{"nodePathMap":[{"node":"a"}]}'), 'a').roots).toEqual([]);
  });

  it('takes names and labels as --root does, in a string or an object', () => {
    const entries = parseNodeRootsConfig(
      JSON.stringify({
        nodePathMap: [
          {
            node: 'n1',
            paths: [
              'fast:ssd=/mnt/nvme',
              { name: 'bulk', labels: ['hdd', 'cheap'], path: '/mnt/hdd/' },
              '/mnt/x',
            ],
          },
        ],
      }),
    );
    expect(rootsOfNode(entries, 'n1').roots).toEqual([
      { name: 'fast', labels: ['ssd'], path: '/mnt/nvme' },
      { name: 'bulk', labels: ['hdd', 'cheap'], path: '/mnt/hdd' },
      { name: 'x', path: '/mnt/x' },
    ]);
  });

  it('keeps a path marked retired apart: served, but no place for new volumes', () => {
    const entries = parseNodeRootsConfig(
      JSON.stringify({
        nodePathMap: [
          {
            node: 'n1',
            paths: ['/mnt/new', { path: '/mnt/old', retired: true }, { path: '/mnt/x', retired: false }],
          },
        ],
      }),
    );
    expect(rootsOfNode(entries, 'n1')).toEqual({
      entry: 'n1',
      roots: [
        { name: 'new', path: '/mnt/new' },
        { name: 'x', path: '/mnt/x' },
      ],
      retired: [{ name: 'old', path: '/mnt/old' }],
    });
    expect(parseError({ nodePathMap: [{ node: 'a', paths: [{ path: '/d', retired: 'yes' }] }] })).toThrow(
      'a "retired" on node a must be true or false',
    );
    // Retired roots are checked with the others: a path never names two roots.
    expect(
      parseError({ nodePathMap: [{ node: 'a', paths: ['/d/e', { path: '/d', retired: true }] }] }),
    ).toThrow('node a: root e (/d/e) is inside root d (/d)');
  });

  it('names alike paths of one last segment by their order, around the names given', () => {
    const entries = parseNodeRootsConfig(
      JSON.stringify({
        nodePathMap: [{ node: 'n1', paths: ['/mnt/a/Data_1', 'data-1=/mnt/c', '/mnt/b/data.1', '/mnt/@'] }],
      }),
    );
    expect(rootsOfNode(entries, 'n1').roots.map((root) => root.name)).toEqual([
      'data-1-2',
      'data-1',
      'data-1-3',
      'root',
    ]);
  });

  it('refuses a file it cannot read the same way on every node, saying what and where', () => {
    expect(() => parseNodeRootsConfig('{"nodePathMap": [ # ]}')).toThrow(/^not valid JSON: /);
    expect(parseError([])).toThrow('must be a JSON object with a "nodePathMap" list');
    expect(parseError({ nodePathMap: {} })).toThrow('"nodePathMap" must be a list');
    expect(parseError({ nodePathMap: [{ paths: ['/a'] }] })).toThrow(
      'nodePathMap[0] must have a "node" name',
    );
    expect(parseError({ nodePathMap: [{ node: 'a' }, { node: 'a' }] })).toThrow('node a is listed twice');
    expect(parseError({ nodePathMap: [{ node: 'a', paths: '/a' }] })).toThrow(
      'the "paths" of node a must be a list',
    );
    expect(parseError({ nodePathMap: [{ node: 'a', paths: ['opt'] }] })).toThrow(
      'a path on node a must be absolute and not /, got "opt"',
    );
    expect(parseError({ nodePathMap: [{ node: 'a', paths: ['/'] }] })).toThrow('must be absolute and not /');
    expect(parseError({ nodePathMap: [{ node: 'a', paths: ['/d', '/d/'] }] })).toThrow(
      'path /d is given twice on node a',
    );
    expect(parseError({ nodePathMap: [{ node: 'a', paths: ['/d', '/d/e'] }] })).toThrow(
      'node a: root e (/d/e) is inside root d (/d)',
    );
    expect(parseError({ nodePathMap: [{ node: 'a', paths: ['Fast=/d'] }] })).toThrow(
      'node a: root name or label "Fast" must be',
    );
    expect(parseError({ nodePathMap: [{ node: 'a', paths: [{ path: '/d', labels: 'x' }] }] })).toThrow(
      'the "labels" of a path on node a must be a list of strings',
    );
  });

  it("refuses local-path's shared and per-class settings rather than ignoring them", () => {
    expect(parseError({ nodePathMap: [], sharedFileSystemPath: '/shared' })).toThrow(
      '"sharedFileSystemPath" is not read',
    );
    expect(parseError({ nodePathMap: [], storageClassConfigs: { ssd: { nodePathMap: [] } } })).toThrow(
      '"storageClassConfigs" is not read',
    );
    // Their empty values, as local-path's own examples write them, are fine.
    expect(
      parseNodeRootsConfig('{"nodePathMap":[],"sharedFileSystemPath":"","storageClassConfigs":{}}'),
    ).toEqual([]);
  });
});

describe('the shipped ConfigMap', () => {
  it("gives every node the DaemonSet's one root, so applying it changes no layout", async () => {
    const [configMap] = loadAllYaml(
      await readFile(join(import.meta.dirname, '..', 'deploy', 'node-roots-config.yaml'), 'utf8'),
    ) as V1ConfigMap[];
    const entries = parseNodeRootsConfig(configMap?.data?.['config.json'] ?? '');
    expect(rootsOfNode(entries, 'any-node')).toEqual({
      entry: defaultNodeEntry,
      roots: [{ name: 'hostpath', path: defaultRoot }],
      retired: [],
    });
  });
});
