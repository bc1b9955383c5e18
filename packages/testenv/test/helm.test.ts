import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MissingToolError } from '../src/command.ts';
import { helmBinary, helmCacheDir, helmLdflags } from '../src/helm.ts';
import { pinnedHelmVersion } from '../src/versions.ts';
import { temporaryDir } from './support/temporary-dir.ts';

describe('helm build cache', () => {
  it('is a directory per Helm version beside the control-plane binaries', () => {
    expect(helmCacheDir('/cache', 'v4.3.1')).toBe('/cache/helm-v4.3.1');
  });

  it('answers a cache hit without running Go', async () => {
    const cacheRoot = await temporaryDir('testenv-helm-');
    const bin = join(helmCacheDir(cacheRoot), 'bin');
    await mkdir(bin, { recursive: true });
    await writeFile(join(bin, 'helm'), '#!/bin/sh\n');
    await chmod(join(bin, 'helm'), 0o755);
    await expect(helmBinary({ cacheRoot, env: { PATH: '/nonexistent' } })).resolves.toBe(join(bin, 'helm'));
  });

  it('names the missing Go toolchain and the Helm release on a cold cache', async () => {
    const cacheRoot = await temporaryDir('testenv-helm-');
    const failure = helmBinary({ cacheRoot, env: { PATH: '/nonexistent' } });
    await expect(failure).rejects.toBeInstanceOf(MissingToolError);
    await expect(failure).rejects.toThrow(`builds Helm ${pinnedHelmVersion} from the Go module proxy`);
  });

  it('stamps the release into `helm version` as Helm’s Makefile does', () => {
    expect(helmLdflags('v4.3.1')).toBe(
      '-s -w -X helm.sh/helm/v4/internal/version.version=v4.3.1 -X helm.sh/helm/v4/internal/version.gitCommit= -X helm.sh/helm/v4/internal/version.gitTreeState=clean',
    );
    expect(() => helmLdflags('4.3')).toThrow('not a Helm release tag: 4.3');
  });
});
