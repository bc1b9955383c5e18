/**
 * The Go side of the bench: `packages/bench/go`, a reference provisioner on the Go library
 * (sig-storage-lib-external-provisioner v13) and a bare client-go PV creator, built from the Go
 * module proxy on first use into a cache directory keyed by the sources, as testenv builds its
 * control plane. A cache hit never runs Go.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { access, mkdir, readdir, readFile, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { defaultCacheRoot } from '@kube-provisioner/testenv/internal';

/** The Go module of the bench: beside `src/` and `dist/` alike. */
export const goModuleDir: string = join(import.meta.dirname, '..', 'go');

/** `${XDG_CACHE_HOME:-~/.cache}/kube-provisioner/bench`, beside testenv's cache. */
export function benchCacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  return join(dirname(defaultCacheRoot(env)), 'bench');
}

/** A short hash of the module's files (sources, go.mod, go.sum): the cache key. */
export async function goSourcesKey(dir: string = goModuleDir): Promise<string> {
  const names = (await readdir(dir)).filter((name) => /\.go$|^go\.(mod|sum)$/.test(name)).sort();
  const hash = createHash('sha256');
  for (const name of names)
    hash
      .update(name)
      .update('\0')
      .update(await readFile(join(dir, name)));
  return hash.digest('hex').slice(0, 16);
}

/** Returns the path of the `bench-go` executable, building it when the cache has none for these sources. */
export async function ensureBenchGo(onProgress: (message: string) => void): Promise<string> {
  const dir = join(benchCacheRoot(), await goSourcesKey());
  const binary = join(dir, 'bench-go');
  try {
    await access(binary);
    return binary;
  } catch {
    // Not built yet.
  }
  await mkdir(dir, { recursive: true });
  const partial = join(dir, `bench-go.partial-${process.pid}`);
  onProgress(`building the Go reference (sig-storage-lib-external-provisioner v13, client-go) into ${dir}`);
  const started = performance.now();
  try {
    await promisify(execFile)('go', ['build', '-trimpath', '-mod=readonly', '-o', partial, '.'], {
      cwd: goModuleDir,
      env: { ...process.env, CGO_ENABLED: '0' },
      maxBuffer: 16 * 1024 * 1024,
    });
  } catch (err) {
    await rm(partial, { force: true });
    const { code, stderr } = err as NodeJS.ErrnoException & { stderr?: string };
    if (code === 'ENOENT') {
      throw new Error(
        'the bench builds its Go reference from the Go module proxy and needs Go >= 1.26 on PATH',
      );
    }
    throw new Error(`go build of ${goModuleDir} failed:\n${stderr ?? String(err)}`);
  }
  // Concurrent runs each build; the rename makes whichever finishes last win atomically.
  await rename(partial, binary);
  onProgress(`built the Go reference in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  return binary;
}
