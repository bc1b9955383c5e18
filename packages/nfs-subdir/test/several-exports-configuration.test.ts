import { describe, expect, it } from 'vitest';
import { parseCliOptions, UsageError } from '../src/cli-options.ts';
import { parseExportList } from '../src/export-list.ts';

const name = { PROVISIONER_NAME: 'example.com/nfs' };
const two = JSON.stringify([
  { name: 'fast', server: 'nfs-a.example.com', path: '/export/' },
  { name: 'big', server: 'nfs-b.example.com', path: '/export', mountRoot: '/mnt/big/' },
]);

describe('NFS_EXPORTS', () => {
  it('lists several exports, each mounted at /persistentvolumes/<name> unless it says where', () => {
    const options = parseCliOptions([], { ...name, NFS_EXPORTS: two });
    expect(options.exports).toEqual([
      { name: 'fast', server: 'nfs-a.example.com', path: '/export', mountRoot: '/persistentvolumes/fast' },
      { name: 'big', server: 'nfs-b.example.com', path: '/export', mountRoot: '/mnt/big' },
    ]);
    expect(options).not.toHaveProperty('server');
  });

  it('is also the flag --nfs-exports', () => {
    expect(parseCliOptions(['--nfs-exports', two], name).exports).toHaveLength(2);
  });

  it('leaves the single-export form exactly as it was when unset', () => {
    const options = parseCliOptions([], { ...name, NFS_SERVER: 'nfs.example.com', NFS_PATH: '/export' });
    expect(options).toMatchObject({
      server: 'nfs.example.com',
      exportPath: '/export',
      mountRoot: '/persistentvolumes',
    });
    expect(options.exports).toBeUndefined();
  });

  it('refuses NFS_EXPORTS together with NFS_SERVER or NFS_PATH', () => {
    for (const extra of [{ NFS_SERVER: 'nfs.example.com' }, { NFS_PATH: '/export' }]) {
      expect(() => parseCliOptions([], { ...name, NFS_EXPORTS: two, ...extra })).toThrow(
        new UsageError('NFS_EXPORTS replaces NFS_SERVER and NFS_PATH: set either, not both'),
      );
    }
  });

  it('turns a bad list into a usage error (exit code 2)', () => {
    expect(() => parseCliOptions([], { ...name, NFS_EXPORTS: '[]' })).toThrow(UsageError);
  });

  it('takes weights and labels from the flag and the environment alike, a bad one a usage error', () => {
    const weighted = JSON.stringify([
      { name: 'fast', server: 'nfs-a.example.com', path: '/export', weight: 2, labels: { disk: 'ssd' } },
    ]);
    for (const options of [
      parseCliOptions(['--nfs-exports', weighted], name),
      parseCliOptions([], { ...name, NFS_EXPORTS: weighted }),
    ]) {
      expect(options.exports).toEqual([
        {
          name: 'fast',
          server: 'nfs-a.example.com',
          path: '/export',
          mountRoot: '/persistentvolumes/fast',
          weight: 2,
          labels: { disk: 'ssd' },
        },
      ]);
    }
    const bad = JSON.stringify([{ name: 'fast', server: 's', path: '/x', weight: 0 }]);
    expect(() => parseCliOptions([], { ...name, NFS_EXPORTS: bad })).toThrow(
      new UsageError('NFS_EXPORTS[0]: "weight" must be a positive integer, got 0'),
    );
  });
});

describe('parseExportList', () => {
  const entry = (fields: Record<string, unknown>) => ({ name: 'a', server: 's', path: '/x', ...fields });

  it.each([
    ['not JSON', '{', 'NFS_EXPORTS is not JSON'],
    ['an empty array', '[]', 'NFS_EXPORTS must be a non-empty JSON array'],
    ['an unknown key', JSON.stringify([entry({ zone: 'a' })]), 'NFS_EXPORTS[0]: unknown key "zone"'],
    ['a name that is no DNS label', JSON.stringify([entry({ name: 'A_1' })]), '"name" must be a DNS label'],
    ['an empty server', JSON.stringify([entry({ server: '' })]), '"server" must be a non-empty string'],
    ['a relative path', JSON.stringify([entry({ path: 'x' })]), '"path" must be an absolute path, got "x"'],
    ['a mount root of /', JSON.stringify([entry({ mountRoot: '/' })]), '"mountRoot" must not be /'],
  ])('refuses %s', (_, text, message) => {
    expect(() => parseExportList(text)).toThrow(message);
  });

  it.each([
    ['one name twice', [entry({}), entry({ server: 't' })], 'two exports have one name'],
    [
      'one mount point inside another',
      [entry({ mountRoot: '/m' }), entry({ name: 'b', server: 't', mountRoot: '/m/b' })],
      'one mount point is inside the other',
    ],
    [
      'one path of a server inside another (a PV would be below both)',
      [entry({ path: '/x' }), entry({ name: 'b', path: '/x/y' })],
      'one path of server s is the other or inside it',
    ],
  ])('refuses %s', (_, list, message) => {
    expect(() => parseExportList(JSON.stringify(list))).toThrow(message);
  });

  it("reads an export's weight and labels, leaving both out where the entry has none", () => {
    const list = [
      entry({ weight: 3, labels: { disk: 'ssd', 'example.com/zone': 'a', legacy: '' } }),
      entry({ name: 'b', server: 't' }),
    ];
    expect(parseExportList(JSON.stringify(list))).toEqual([
      {
        name: 'a',
        server: 's',
        path: '/x',
        mountRoot: '/persistentvolumes/a',
        weight: 3,
        labels: { disk: 'ssd', 'example.com/zone': 'a', legacy: '' },
      },
      { name: 'b', server: 't', path: '/x', mountRoot: '/persistentvolumes/b' },
    ]);
  });

  it.each([
    ['a weight of 0', { weight: 0 }, 'NFS_EXPORTS[1]: "weight" must be a positive integer, got 0'],
    ['a negative weight', { weight: -2 }, 'NFS_EXPORTS[1]: "weight" must be a positive integer, got -2'],
    ['a fractional weight', { weight: 1.5 }, 'NFS_EXPORTS[1]: "weight" must be a positive integer, got 1.5'],
    ['a weight as a string', { weight: '2' }, 'NFS_EXPORTS[1]: "weight" must be a positive integer, got "2"'],
    [
      'labels as a list',
      { labels: ['ssd'] },
      'NFS_EXPORTS[1]: "labels" must be an object of label keys to string values',
    ],
    [
      'a label value that is no string',
      { labels: { tier: 1 } },
      'NFS_EXPORTS[1]: "labels": the value of "tier" must be a string, got 1',
    ],
    [
      'a bad label key',
      { labels: { 'Disk Type': 'ssd' } },
      'NFS_EXPORTS[1]: "labels": "Disk Type" is not a label key',
    ],
    [
      'a bad label value',
      { labels: { disk: 'ssd!' } },
      'NFS_EXPORTS[1]: "labels": "ssd!" is not a label value',
    ],
  ])('refuses %s, naming the entry', (_, fields, message) => {
    const text = JSON.stringify([entry({}), entry({ name: 'b', server: 't', ...fields })]);
    expect(() => parseExportList(text)).toThrow(message);
  });

  it('accepts one path on two servers, and sibling paths on one server', () => {
    const list = [entry({}), entry({ name: 'b', server: 't' }), entry({ name: 'c', path: '/xy' })];
    expect(parseExportList(JSON.stringify(list)).map((e) => e.name)).toEqual(['a', 'b', 'c']);
  });
});
