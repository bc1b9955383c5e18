/**
 * The runtime tree of an image for an architecture this machine does not run natively (arm64 on
 * x86-64), assembled without executing any of it: Node's binary from the npm package
 * `node-linux-<arch>` at the base's version, Debian's packages for that architecture downloaded and
 * unpacked (`apt-get download`, `dpkg-deb -x`; needs `dpkg --add-architecture <arch>` and
 * `apt-get update`), and of those only the loader and the libraries the programs need, read from
 * their ELF headers (`readelf`), plus the host's CA certificates. It is the same tree the Dockerfiles'
 * `runtime` stage makes with `ldd` on a native base (runtime-rootfs.sh), under `/rootfs`, imported
 * into podman as an image that a build substitutes for that stage (`--build-context runtime=…`).
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, copyFile, lstat, mkdir, mkdtemp, readdir, readlink, rm } from 'node:fs/promises';
import { dirname, join, posix } from 'node:path';
import { runCommand } from '../command.ts';
import { baseImageContents } from './base-image.ts';
import { podman } from './podman.ts';

/** The architectures built without a native base, by Debian's and Node's names for them. */
export const foreignArchitectures = {
  arm64: { debian: 'arm64', node: 'arm64', libDir: 'aarch64-linux-gnu' },
} as const;

/** An architecture {@link ensureForeignRootfs} can assemble. */
export type ForeignArchitecture = keyof typeof foreignArchitectures;

/** What an image runs beyond `node`: Debian packages to unpack and programs from them. */
export interface RuntimeExtras {
  /** Debian packages holding the programs and the libraries they link (not resolved: name them). */
  readonly packages: readonly string[];
  /** Absolute paths of programs inside those packages, copied to `/usr/local/bin`. */
  readonly programs: readonly string[];
}

/** The packages every runtime needs: glibc with its loader, and Node's C++ runtime. */
const nodePackages = ['libc6', 'libstdc++6', 'libgcc-s1'] as const;
const trustStore = '/etc/ssl/certs/ca-certificates.crt';
const keyLabel = 'io.kube-provisioner.runtime-rootfs';

/** Options of {@link ensureForeignRootfs}. */
export interface ForeignRootfsOptions {
  /** Working directory for the downloads (a fresh subdirectory is made and removed). */
  readonly workDir: string;
  readonly logFile?: string;
  readonly onProgress?: (message: string) => void;
}

/** The tag of the tree for `arch` with `extras`: its content key, so a changed input makes a new one. */
export function foreignRootfsImage(arch: ForeignArchitecture, extras: RuntimeExtras): string {
  const key = JSON.stringify([arch, baseImageContents, nodePackages, extras.packages, extras.programs]);
  return `localhost/kube-testenv/runtime-rootfs:${arch}-${createHash('sha256').update(key).digest('hex').slice(0, 16)}`;
}

/** Makes {@link foreignRootfsImage} present in podman's store, assembling it when missing. */
export async function ensureForeignRootfs(
  arch: ForeignArchitecture,
  extras: RuntimeExtras,
  options: ForeignRootfsOptions,
): Promise<string> {
  const image = foreignRootfsImage(arch, extras);
  const present = await podman([
    'image',
    'inspect',
    '--format',
    `{{index .Labels "${keyLabel}"}}`,
    image,
  ]).then(
    (label) => label.trim() === image,
    () => false,
  );
  if (present) return image;
  options.onProgress?.(
    `assembling the ${arch} runtime (node, ${[...nodePackages, ...extras.packages].join(', ')})`,
  );
  await mkdir(options.workDir, { recursive: true });
  const work = await mkdtemp(join(options.workDir, `rootfs-${arch}-`));
  const run = (file: string, args: readonly string[], cwd = work) =>
    runCommand(file, args, { cwd, ...(options.logFile ? { logFile: options.logFile } : {}) });
  try {
    const names = foreignArchitectures[arch];
    const version = baseImageContents.node;
    await run('npm', ['pack', '--silent', `node-linux-${names.node}@${version}`]);
    const unpacked = join(work, 'unpacked');
    await mkdir(unpacked);
    await run('tar', ['-xzf', `node-linux-${names.node}-${version}.tgz`, '-C', unpacked]);
    const debs = join(work, 'debs');
    await mkdir(debs);
    await runCommand(
      'apt-get',
      ['download', ...[...nodePackages, ...extras.packages].map((name) => `${name}:${names.debian}`)],
      {
        cwd: debs,
        missingHint: 'the arm64 images are assembled from Debian packages (apt-get)',
        ...(options.logFile ? { logFile: options.logFile } : {}),
      },
    ).catch((err: unknown) => {
      throw new Error(
        `apt-get download of ${names.debian} packages failed: does dpkg know the architecture (dpkg --add-architecture ${names.debian} && apt-get update)? ${String(err)}`,
      );
    });
    for (const deb of await readdir(debs)) await run('dpkg-deb', ['-x', join(debs, deb), unpacked]);

    const root = join(work, 'tree', 'rootfs');
    await mkdir(join(root, 'usr/local/bin'), { recursive: true });
    await mkdir(join(root, 'tmp'));
    await chmod(join(root, 'tmp'), 0o1777);
    const programs = [
      { from: join(unpacked, 'package/bin/node'), to: '/usr/local/bin/node' },
      ...extras.programs.map((path) => ({
        from: join(unpacked, path),
        to: `/usr/local/bin/${posix.basename(path)}`,
      })),
    ];
    const libraries = new Set<string>();
    for (const program of programs) {
      await copyFile(program.from, join(root, program.to));
      await chmod(join(root, program.to), 0o755);
      await collectLibraries(program.from, unpacked, names.libDir, libraries);
    }
    for (const library of libraries) {
      await mkdir(dirname(join(root, library)), { recursive: true });
      await copyFile(await resolveInTree(unpacked, library), join(root, library));
    }
    await mkdir(join(root, dirname(trustStore)), { recursive: true });
    if (existsSync(trustStore)) await copyFile(trustStore, join(root, trustStore));

    const tarball = join(work, 'rootfs.tar');
    await run('tar', ['-C', join(work, 'tree'), '-cf', tarball, '.']);
    // Labelled as the host's architecture on purpose: it only carries files into a build, and podman
    // looks build contexts up by the host's platform.
    await podman(['import', '--change', `LABEL ${keyLabel}=${image}`, tarball, image]);
    return image;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/**
 * Adds to `found` the loader and, transitively, every library `elf` (a path under `tree`) needs,
 * as absolute paths inside the tree; throws naming a library the unpacked packages lack.
 */
async function collectLibraries(
  elf: string,
  tree: string,
  libDir: string,
  found: Set<string>,
): Promise<void> {
  const headers = await runCommand('readelf', ['--dynamic', '--program-headers', '--wide', elf], {
    missingHint: 'reading what an arm64 binary links needs readelf (apt-get install binutils)',
  });
  const interpreter = /Requesting program interpreter: ([^\]]+)\]/u.exec(headers)?.[1];
  if (interpreter !== undefined) found.add(interpreter);
  for (const [, soname = ''] of headers.matchAll(/\(NEEDED\)\s+Shared library: \[([^\]]+)\]/gu)) {
    const path = [`/lib/${libDir}`, `/usr/lib/${libDir}`, '/lib', '/usr/lib']
      .map((dir) => `${dir}/${soname}`)
      .find((candidate) => existsSync(join(tree, candidate)));
    if (path === undefined)
      throw new Error(`${elf} needs ${soname}, which none of the unpacked packages holds`);
    if (found.has(path)) continue;
    found.add(path);
    await collectLibraries(await resolveInTree(tree, path), tree, libDir, found);
  }
}

/** The real file `path` (absolute inside `tree`) names, following symbolic links inside the tree. */
async function resolveInTree(tree: string, path: string): Promise<string> {
  let current = path;
  for (let hops = 0; hops < 16; hops++) {
    const onHost = join(tree, current);
    if (!(await lstat(onHost)).isSymbolicLink()) return onHost;
    const target = await readlink(onHost);
    current = posix.isAbsolute(target) ? target : posix.join(posix.dirname(current), target);
  }
  throw new Error(`too many symbolic links from ${path} in ${tree}`);
}
