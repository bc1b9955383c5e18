import { InfeasibleError } from '@kube-provisioner/controller';
import { describe, expect, it } from 'vitest';
import { classExportsOf } from '../src/class-exports.ts';
import type { NfsExportConfig } from '../src/export-list.ts';

const config = (name: string, labels?: Record<string, string>): NfsExportConfig => ({
  name,
  server: 'nfs.example.com',
  path: `/srv/${name}`,
  mountRoot: `/persistentvolumes/${name}`,
  ...(labels === undefined ? {} : { labels }),
});
const exports = [
  config('fast', { disk: 'ssd', zone: 'a' }),
  config('big', { disk: 'hdd', zone: 'b' }),
  config('old', { disk: 'ssd', zone: 'b', legacy: 'true' }),
  config('plain'),
];

describe('the exports and placement of a class', () => {
  it('uses every export by most free space, and passes the other parameters on', () => {
    expect(classExportsOf({ onDelete: 'delete' }, exports)).toEqual({
      names: ['fast', 'big', 'old', 'plain'],
      placement: 'most-free',
      parameters: { onDelete: 'delete' },
    });
    expect(classExportsOf(undefined, exports).names).toHaveLength(4);
  });

  it('selects by labels, and takes exports, exportSelector and placement out of the parameters', () => {
    const parameters = { exportSelector: 'disk=ssd,!legacy', placement: 'round-robin', pathPattern: 'x' };
    expect(classExportsOf(parameters, exports)).toEqual({
      names: ['fast'],
      placement: 'round-robin',
      parameters: { pathPattern: 'x' },
    });
    expect(classExportsOf({ exportSelector: 'zone in (b)' }, exports).names).toEqual(['big', 'old']);
    expect(classExportsOf({ exportSelector: 'disk notin (ssd)' }, exports).names).toEqual(['big', 'plain']);
  });

  it('with both exports and exportSelector, uses the exports named that the selector matches', () => {
    const parameters = { exports: 'fast,big,plain', exportSelector: 'disk', placement: 'weighted' };
    expect(classExportsOf(parameters, exports)).toMatchObject({
      names: ['fast', 'big'],
      placement: 'weighted',
    });
  });

  it('refuses a selection of no export, listing the exports and their labels', () => {
    const refuse = () => classExportsOf({ exports: 'big', exportSelector: 'disk=ssd' }, exports);
    expect(refuse).toThrow(InfeasibleError);
    expect(refuse).toThrow(
      'the StorageClass selects no export: "exportSelector" "disk=ssd" matches none of the exports "exports" names; the exports and their labels: fast {"disk":"ssd","zone":"a"}, big {"disk":"hdd","zone":"b"}, old {"disk":"ssd","zone":"b","legacy":"true"}, plain {}',
    );
  });

  it('refuses a malformed selector, an unknown policy and an unknown export, all in one message', () => {
    const refuse = () =>
      classExportsOf({ exports: 'fast,nope', exportSelector: 'disk in ssd', placement: 'random' }, exports);
    expect(refuse).toThrow(InfeasibleError);
    expect(refuse).toThrow(
      'invalid StorageClass parameter "exports" "fast,nope": unknown export nope; this provisioner serves the exports fast, big, old, plain; ' +
        'invalid StorageClass parameter "exportSelector" "disk in ssd": expected "(" opening a list of values at character 9, found "ssd"; ' +
        'invalid StorageClass parameter "placement" "random": accepted values: most-free, round-robin, weighted',
    );
  });
});
