/** Two real directories as exports `a` and `b` of one server, for the several-exports tests. */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { NfsExportConfig } from '../src/export-list.ts';
import type { StatFs } from '../src/export-placement.ts';
import {
  SeveralExportsProvisioner,
  type SeveralExportsProvisionerOptions,
} from '../src/several-exports-provisioner.ts';
import { classReader, provisionerName, temporaryRoot } from './fixtures.ts';

/** What {@link twoExports} made; dispose of `dir` to remove both mounts. */
export interface TwoExports {
  readonly dir: Awaited<ReturnType<typeof temporaryRoot>>;
  readonly exports: readonly NfsExportConfig[];
  readonly provisioner: SeveralExportsProvisioner;
  /** The mount root of export `name`. */
  readonly mount: (name: string) => string;
}

export const gi: number = 1024 ** 3;

/**
 * Exports `a` and `b` (`nfs.example.com:/srv/<name>`) mounted at two fresh directories, and a statfs
 * answering `free[name]` bytes per mount (an I/O error for a name it lacks); `free` may change later.
 * `extra` options may be made from the exports.
 */
export async function twoExports(
  free: Record<string, number>,
  extra:
    | Partial<SeveralExportsProvisionerOptions>
    | ((exports: readonly NfsExportConfig[]) => Partial<SeveralExportsProvisionerOptions>) = {},
): Promise<TwoExports> {
  const dir = await temporaryRoot();
  const exports: NfsExportConfig[] = ['a', 'b'].map((name) => ({
    name,
    server: 'nfs.example.com',
    path: `/srv/${name}`,
    mountRoot: join(dir.path, name),
  }));
  await Promise.all(exports.map((e) => mkdir(e.mountRoot)));
  const statfs: StatFs = async (path) => {
    const found = exports.find((e) => e.mountRoot === path);
    if (found === undefined) throw new Error(`statfs of unexpected ${path}`);
    const bytes = free[found.name];
    if (bytes === undefined) throw new Error(`EIO: i/o error, statfs '${path}'`);
    return { bsize: 4096, blocks: (2 * bytes) / 4096, bavail: bytes / 4096 };
  };
  const provisioner = new SeveralExportsProvisioner({
    dialect: 'nfs-subdir',
    exports,
    provisionerName,
    classes: classReader(),
    statfs,
    ...(typeof extra === 'function' ? extra(exports) : extra),
  });
  return { dir, exports, provisioner, mount: (name: string) => join(dir.path, name) };
}
