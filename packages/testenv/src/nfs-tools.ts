import { existsSync, readdirSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/** The Debian packages that provide the test NFS server and client, in install order. */
export const nfsAptPackages: readonly string[] = ['nfs-ganesha', 'nfs-ganesha-vfs', 'libnfs-utils'];

/** What each package must put on the machine. */
const probes: Readonly<Record<string, (path: string) => boolean>> = {
  'nfs-ganesha': (path) => onPath('ganesha.nfsd', path),
  // The VFS backend is a plugin, not an executable: look in every library directory ganesha uses.
  'nfs-ganesha-vfs': () => ganeshaPluginDirs().some((dir) => existsSync(join(dir, 'libfsalvfs.so'))),
  'libnfs-utils': (path) => ['nfs-ls', 'nfs-cp', 'nfs-cat'].every((tool) => onPath(tool, path)),
};

function onPath(executable: string, path: string): boolean {
  return path.split(delimiter).some((dir) => dir !== '' && existsSync(join(dir, executable)));
}

function ganeshaPluginDirs(): string[] {
  const dirs = ['/usr/lib64/ganesha', '/usr/lib/ganesha', '/usr/local/lib/ganesha'];
  // Debian's multiarch layout: /usr/lib/<triplet>/ganesha.
  const multiarch = readdirSync('/usr/lib', { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && entry.name.includes('-linux-'))
    .map((entry) => join('/usr/lib', entry.name, 'ganesha'));
  return [...dirs, ...multiarch];
}

/** The packages of {@link nfsAptPackages} whose files are missing; empty when everything is installed. */
export function missingNfsPackages(path: string = process.env.PATH ?? ''): string[] {
  return nfsAptPackages.filter((pkg) => !probes[pkg]?.(path));
}

/** nfs-ganesha or the libnfs tools are not installed. */
export class NfsToolsMissingError extends Error {
  override readonly name = 'NfsToolsMissingError';
  /** The missing Debian packages. */
  readonly packages: readonly string[];

  constructor(packages: readonly string[]) {
    super(
      `the NFS test server needs the Debian packages ${packages.join(', ')}: ` +
        `apt-get install -y ${packages.join(' ')}`,
    );
    this.packages = packages;
  }
}

/** Throws {@link NfsToolsMissingError} naming every missing package. */
export function assertNfsTools(path?: string): void {
  const missing = missingNfsPackages(path);
  if (missing.length > 0) throw new NfsToolsMissingError(missing);
}

/**
 * Whether NFS end-to-end tests can run here (nfs-ganesha, its VFS backend and libnfs-utils are
 * installed). Outside CI a missing package makes this false, with a warning naming the packages, so
 * the caller can `describe.skipIf` and the run reports the tests as skipped. With `CI=true` the CI
 * script is supposed to have installed them, so it throws an `NfsToolsMissingError` instead and
 * the file fails.
 */
export function nfsToolsAvailable(env: NodeJS.ProcessEnv = process.env): boolean {
  const missing = missingNfsPackages(env.PATH);
  if (missing.length === 0) return true;
  const error = new NfsToolsMissingError(missing);
  if (env.CI === 'true') throw error;
  console.warn(`skipping NFS end-to-end tests: ${error.message}`);
  return false;
}
