/**
 * A directory written the way kubelet writes a ConfigMap volume: each version in a directory of
 * its own, `..data` a symlink to the current one swapped by rename, and each key a symlink through
 * `..data`, so a reader sees the old file or the new one, never a half-written one.
 */
import { mkdir, mkdtemp, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A ConfigMap volume holding key `key`; {@link ConfigMapVolume.update} swaps in new content. */
export interface ConfigMapVolume extends AsyncDisposable {
  /** The directory the volume is mounted at. */
  readonly directory: string;
  /** The key's file, as a Pod reads it. */
  readonly file: string;
  /** Writes a new version and swaps `..data` to it atomically, as kubelet does. */
  update(content: string): Promise<void>;
}

/** A volume of `key` holding `content`. */
export async function configMapVolume(key: string, content: string): Promise<ConfigMapVolume> {
  const directory = await mkdtemp(join(tmpdir(), 'hostpath-configmap-'));
  let version = 0;
  const update = async (next: string) => {
    version += 1;
    const versionDir = `..version_${version}`;
    await mkdir(join(directory, versionDir));
    await writeFile(join(directory, versionDir, key), next);
    await symlink(versionDir, join(directory, '..data_tmp'));
    await rename(join(directory, '..data_tmp'), join(directory, '..data'));
  };
  await update(content);
  await symlink(join('..data', key), join(directory, key));
  return {
    directory,
    file: join(directory, key),
    update,
    async [Symbol.asyncDispose]() {
      await rm(directory, { recursive: true, force: true });
    },
  };
}
