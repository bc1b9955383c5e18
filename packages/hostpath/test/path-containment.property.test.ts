import { lstat, mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { hostileClaim } from '@kube-provisioner/safe-fs/testing';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HostPathProvisioner } from '../src/hostpath-provisioner.ts';
import { volumePath } from '../src/persistent-volume.ts';
import { claim, context, provisionOptions, storageClass, temporaryRoot } from './fixtures.ts';

describe('path containment', () => {
  it('never resolves a volume outside the root, whatever the claim metadata and pattern', async () => {
    await using sandbox = await temporaryRoot();
    const root = join(sandbox.path, 'root');
    await mkdir(root);
    const provisioner = new HostPathProvisioner({ mode: 'shared', root });
    let created = 0;

    await fc.assert(
      fc.asyncProperty(hostileClaim, async ({ pathPattern, ...metadata }) => {
        const result = await provisioner.provision(
          provisionOptions(claim(metadata), storageClass({ pathPattern })),
          context,
        );
        if ('pv' in result) {
          const path = volumePath(result.pv) ?? '';
          expect(path.startsWith(`${root}/`)).toBe(true);
          expect(path.split('/')).not.toContain('..');
          expect((await lstat(path)).isDirectory()).toBe(true);
          created += 1;
        }
      }),
      { numRuns: 300 },
    );
    // The property is not vacuous: plenty of inputs are legitimate and do get a directory.
    expect(created).toBeGreaterThan(30);
    // Nothing was ever created beside the root.
    expect(await readdir(sandbox.path)).toEqual(['root']);
  });
});
