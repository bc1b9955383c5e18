import { spawnSync } from 'node:child_process';
import { chmod, mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultCacheRoot, ensureBinaries, removeStalePartials } from '../src/binaries.ts';
import { MissingToolError } from '../src/command.ts';
import { cacheKey, pinnedVersions } from '../src/versions.ts';
import { temporaryDir } from './support/temporary-dir.ts';

const executables = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kubectl'];

describe('binary cache', () => {
  it('lives under XDG_CACHE_HOME, else ~/.cache', () => {
    expect(defaultCacheRoot({ XDG_CACHE_HOME: '/x' })).toBe('/x/kube-provisioner/testenv');
    expect(defaultCacheRoot({ HOME: '/home/u' })).toBe('/home/u/.cache/kube-provisioner/testenv');
  });

  it('answers a cache hit without running Go', async () => {
    const cacheRoot = await temporaryDir('testenv-cache-');
    const bin = join(cacheRoot, cacheKey(pinnedVersions), 'bin');
    await mkdir(bin, { recursive: true });
    for (const name of executables) {
      await writeFile(join(bin, name), '#!/bin/sh\n');
      await chmod(join(bin, name), 0o755);
    }
    // No go on PATH: any attempt to build would fail.
    const binaries = await ensureBinaries({ cacheRoot, env: { PATH: '/nonexistent' } });
    expect(binaries.dir).toBe(bin);
    expect(binaries.kubeApiserver).toBe(join(bin, 'kube-apiserver'));
    expect(binaries.kubectl).toBe(join(bin, 'kubectl'));
  });

  it('names the missing Go toolchain on a cold cache', async () => {
    const cacheRoot = await temporaryDir('testenv-cache-');
    const progress: string[] = [];
    const failure = ensureBinaries({
      cacheRoot,
      env: { PATH: '/nonexistent' },
      onProgress: (line) => progress.push(line),
    });
    await expect(failure).rejects.toBeInstanceOf(MissingToolError);
    await expect(failure).rejects.toThrow(/^go not found on PATH: .*Go >= 1\.26/);
  });

  it("removes an interrupted build's partial directory once its process is gone, and keeps a live one's", async () => {
    const versionDir = await temporaryDir('testenv-partials-');
    // A process that has exited: its pid names a build that can no longer finish.
    const gone = spawnSync('true').pid;
    const alive = process.ppid;
    for (const name of [`bin.partial-${gone}`, `bin.partial-${alive}`, 'bin', 'build.log']) {
      await mkdir(join(versionDir, name));
    }
    await removeStalePartials(versionDir);
    expect((await readdir(versionDir)).sort()).toEqual(['bin', `bin.partial-${alive}`, 'build.log']);
  });
});
