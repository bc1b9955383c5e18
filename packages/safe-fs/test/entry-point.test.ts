import { version } from '@kube-provisioner/safe-fs';
import { describe, expect, it } from 'vitest';
import manifest from '../package.json' with { type: 'json' };

describe('public entry point', () => {
  it('loads and reports the package version', () => {
    expect(version).toBe(manifest.version);
    expect(version).toMatch(/^\d+\.\d+\.\d+/);
  });
});
