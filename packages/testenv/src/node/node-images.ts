/**
 * Images for a real node without a registry: podman builds or holds them, `podman save` exports them
 * as OCI archives, and `ctr images import` puts them into the node's containerd, where pods use them
 * with `imagePullPolicy: IfNotPresent` or `Never`. A multi-architecture index is imported whole
 * ({@link importImageIndex}).
 */
import { access, copyFile, mkdir, mkdtemp, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCommand } from '../command.ts';
import { containerLimits, podman } from '../images/podman.ts';
import type { NodeBinaries } from './node-binaries.ts';

/** The sandbox image containerd pins: the pause program of node-binaries.ts, `FROM scratch`. */
export const sandboxImage = 'localhost/kube-testenv/pause:1';

/** The containerd namespace the CRI plugin, and so the kubelet, uses. */
export const criNamespace = 'k8s.io';

/**
 * The OCI archive of {@link sandboxImage}, built with podman once per node version and cached beside
 * the binaries.
 */
export async function ensurePauseArchive(binaries: NodeBinaries): Promise<string> {
  const archive = join(binaries.versionDir, 'pause-image.tar');
  if (await exists(archive)) return archive;
  const context = await mkdtemp(join(binaries.versionDir, 'pause-context-'));
  try {
    await copyFile(binaries.pause, join(context, 'pause'));
    await writeFile(
      join(context, 'Containerfile'),
      ['FROM scratch', 'COPY pause /pause', 'USER 65535:65535', 'ENTRYPOINT ["/pause"]', ''].join('\n'),
    );
    await podman([
      'build',
      ...containerLimits,
      '--tag',
      sandboxImage,
      '--file',
      join(context, 'Containerfile'),
      context,
    ]);
    const partial = `${archive}.partial-${process.pid}`;
    await podman(['save', '--format', 'oci-archive', '--output', partial, sandboxImage]);
    await rename(partial, archive);
    return archive;
  } finally {
    await rm(context, { recursive: true, force: true });
  }
}

/** `ctr` against one containerd, in the CRI namespace. */
export function ctrCommand(
  binaries: Pick<NodeBinaries, 'ctr'>,
  socket: string,
): (args: readonly string[]) => Promise<string> {
  return (args) => runCommand(binaries.ctr, ['--address', socket, '--namespace', criNamespace, ...args]);
}

/** Imports an OCI archive into the node's containerd, unpacked for its snapshotter. */
export async function importArchive(
  ctr: (args: readonly string[]) => Promise<string>,
  archive: string,
): Promise<void> {
  await ctr(['images', 'import', archive]);
}

/** The image references containerd holds in the CRI namespace. */
export async function containerdImages(ctr: (args: readonly string[]) => Promise<string>): Promise<string[]> {
  return (await ctr(['images', 'list', '--quiet'])).split('\n').filter((line) => line.length > 0);
}

/**
 * Copies `image` from podman's store into the node's containerd; a no-op when containerd already
 * holds it. The OCI archive is cached in `archiveDir` under the image's ID, so a later node imports
 * the same build without exporting it again (about 5 s for a project image); archives of earlier
 * builds of the same name are removed.
 */
export async function loadPodmanImage(
  ctr: (args: readonly string[]) => Promise<string>,
  image: string,
  archiveDir: string,
): Promise<void> {
  if ((await containerdImages(ctr)).includes(image)) return;
  const id = (await podman(['image', 'inspect', '--format', '{{.Id}}', image])).trim();
  const prefix = `${image.replace(/[^\w.-]+/gu, '_')}@`;
  const archive = join(archiveDir, `${prefix}${id.slice(0, 16)}.tar`);
  if (!(await exists(archive))) {
    await mkdir(archiveDir, { recursive: true });
    for (const name of await readdir(archiveDir)) {
      if (name.startsWith(prefix)) await rm(join(archiveDir, name), { force: true });
    }
    const partial = `${archive}.partial-${process.pid}`;
    await podman(['save', '--format', 'oci-archive', '--output', partial, image]);
    await rename(partial, archive);
  }
  await importArchive(ctr, archive);
  const held = await containerdImages(ctr);
  if (!held.includes(image)) {
    throw new Error(
      `containerd did not list ${image} after importing ${archive}; it holds: ${held.join(', ')}`,
    );
  }
}

/**
 * Imports every platform of the OCI image index in the layout `layoutDir` (what `npm run image`
 * writes as a manifest list) as `reference`, replacing what that reference named before. The
 * CRI plugin runs the host's platform of it; `ctr run --platform` ({@link runImage}) any other whose
 * binaries the host can execute. The layout names only the tag, so the repository comes from
 * `reference`.
 */
export async function importImageIndex(
  ctr: (args: readonly string[]) => Promise<string>,
  layoutDir: string,
  reference: string,
): Promise<void> {
  const colon = reference.lastIndexOf(':');
  if (colon <= reference.lastIndexOf('/')) throw new Error(`${reference} names no tag`);
  const work = await mkdtemp(join(tmpdir(), 'image-index-'));
  try {
    const archive = join(work, 'index.tar');
    await runCommand('tar', ['-C', layoutDir, '-cf', archive, '.']);
    await ctr(['images', 'import', '--all-platforms', '--base-name', reference.slice(0, colon), archive]);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  const held = await containerdImages(ctr);
  if (!held.includes(reference)) {
    throw new Error(
      `containerd did not list ${reference} after importing ${layoutDir}; it holds: ${held.join(', ')}`,
    );
  }
}

/**
 * Runs `command` in a throw-away container of `reference` for `platform` (e.g. `linux/arm64`, under
 * emulation on x86-64) directly in containerd, outside the kubelet; resolves with its output.
 */
export function runImage(
  ctr: (args: readonly string[]) => Promise<string>,
  reference: string,
  command: readonly string[],
  platform: string,
): Promise<string> {
  const id = `testenv-run-${process.pid}-${Date.now().toString(36)}`;
  return ctr(['run', '--rm', '--platform', platform, reference, id, ...command]);
}

function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}
