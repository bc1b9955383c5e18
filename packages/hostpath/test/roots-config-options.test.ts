import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UsageError } from '@kube-provisioner/controller/cli';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCliOptions } from '../src/cli-options.ts';

let directory = '';
const file = (name: string) => join(directory, name);
const config = JSON.stringify({
  nodePathMap: [
    { node: 'DEFAULT_PATH_FOR_NON_LISTED_NODES', paths: ['/opt/local-path-provisioner'] },
    { node: 'node-a', paths: ['fast:ssd=/mnt/nvme', '/data1'] },
    { node: 'node-c', paths: [] },
  ],
});

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'hostpath-roots-config-'));
  await writeFile(file('config.json'), config);
  await writeFile(file('broken.json'), '{"nodePathMap": [{"node": "node-a", "paths": ["/"]}]}');
});

afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

const parse = (node: string, extra: readonly string[] = [], env: Record<string, string> = {}) =>
  parseCliOptions([`--roots-config=${file('config.json')}`, ...extra], { NODE_NAME: node, ...env });

describe('--roots-config', () => {
  it("gives the node its entry's roots, the first standing for them in logs", () => {
    const options = parse('node-a', ['--roots-config-interval=2s']);
    expect(options.namedRoots).toEqual([
      { name: 'fast', labels: ['ssd'], path: '/mnt/nvme' },
      { name: 'data1', path: '/data1' },
    ]);
    expect(options.root).toBe('/mnt/nvme');
    expect(options.rootsConfig).toEqual({ path: file('config.json'), text: config, entry: 'node-a' });
    expect(options.rootsConfigIntervalMs).toBe(2000);
  });

  it('gives an unlisted node the default entry, a node listed without paths none, from the environment too', () => {
    expect(parse('node-b').namedRoots).toEqual([
      { name: 'local-path-provisioner', path: '/opt/local-path-provisioner' },
    ]);
    const none = parseCliOptions([], { NODE_NAME: 'node-c', HOSTPATH_ROOTS_CONFIG: file('config.json') });
    expect(none.namedRoots).toEqual([]);
    expect(none.rootsConfig?.entry).toBe('node-c');
  });

  it('is a usage error with --root, in shared mode, or for a file it cannot read or accept', () => {
    expect(() => parse('node-a', ['--root=/srv/hostpath'])).toThrow(UsageError);
    expect(() => parse('node-a', [], { HOSTPATH_ROOT: 'a=/srv/a' })).toThrow(
      "--roots-config and --root a=/srv/a both give this node's roots: pass one",
    );
    // The shipped DaemonSet's HOSTPATH_ROOT, the default, is no second answer.
    expect(
      parse('node-a', [], { HOSTPATH_ROOT: '/var/lib/kube-provisioner/hostpath' }).namedRoots,
    ).toHaveLength(2);
    expect(() => parse('node-a', ['--mode=shared'])).toThrow('--roots-config needs per-node mode');
    expect(() => parseCliOptions([`--roots-config=${file('missing.json')}`], { NODE_NAME: 'a' })).toThrow(
      `--roots-config: cannot read ${file('missing.json')}`,
    );
    expect(() => parseCliOptions([`--roots-config=${file('broken.json')}`], { NODE_NAME: 'a' })).toThrow(
      `--roots-config ${file('broken.json')}: a path on node node-a must be absolute and not /, got "/"`,
    );
  });

  it('leaves installs without it as they were: one bare root, no named roots', () => {
    const options = parseCliOptions(['--root=/srv/hostpath'], { NODE_NAME: 'node-a' });
    expect(options.namedRoots).toBeUndefined();
    expect(options.rootsConfig).toBeUndefined();
    expect(options.root).toBe('/srv/hostpath');
  });
});
