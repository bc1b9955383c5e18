/**
 * The project's container images, built with podman from the repository root on the local base
 * image ({@link ensureBaseImage}); the Dockerfiles' own default base stays the official Node image.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { baseImage, defaultImagesCacheDir, ensureBaseImage } from './base-image.ts';
import { containerLimits, imageExists, imageSize, podman } from './podman.ts';

/** One image: its Dockerfile (relative to the repository root) and the tag its manifests name. */
export interface ProjectImage {
  readonly name: 'nfs-subdir-provisioner' | 'hostpath';
  readonly dockerfile: string;
  readonly tag: string;
}

/** The images `npm run image` builds, in that order. */
export const projectImages: readonly ProjectImage[] = [
  {
    name: 'nfs-subdir-provisioner',
    dockerfile: 'examples/nfs/Dockerfile',
    tag: 'ghcr.io/kube-provisioner/nfs-subdir-provisioner:0.1.0',
  },
  {
    name: 'hostpath',
    dockerfile: 'packages/hostpath/Dockerfile',
    tag: 'ghcr.io/kube-provisioner/hostpath:0.1.0',
  },
];

/** The repository root: the build context of every Dockerfile (same depth from `src/` and `dist/`). */
export const repositoryRoot: string = fileURLToPath(new URL('../../../../', import.meta.url));

/** Options of {@link buildProjectImage} and {@link ensureProjectImage}. */
export interface BuildImageOptions {
  /** Receives a line per build step, base image included. */
  readonly onProgress?: (message: string) => void;
  readonly env?: NodeJS.ProcessEnv;
}

/** A built image and its size in bytes, base layers included. */
export interface BuiltImage {
  readonly tag: string;
  readonly bytes: number;
}

/**
 * Builds `image` on the local base (made first if missing). Podman's layer cache makes a rebuild of
 * unchanged sources take seconds. The build's output goes to `<images cache>/<name>.build.log`.
 */
export async function buildProjectImage(
  image: ProjectImage,
  options: BuildImageOptions = {},
): Promise<BuiltImage> {
  await ensureBaseImage(options);
  const logDir = defaultImagesCacheDir(options.env);
  await mkdir(logDir, { recursive: true });
  const logFile = join(logDir, `${image.name}.build.log`);
  await writeFile(logFile, '');
  options.onProgress?.(`building ${image.tag} from ${image.dockerfile} (log: ${logFile})`);
  await podman(
    [
      'build',
      // `npm install` in the build reaches the registry the way the host does.
      '--network=host',
      ...containerLimits,
      '--build-arg',
      `NODE_IMAGE=${baseImage}`,
      '--file',
      image.dockerfile,
      '--tag',
      image.tag,
      '.',
    ],
    { cwd: repositoryRoot, logFile },
  );
  return { tag: image.tag, bytes: await imageSize(image.tag) };
}

/** Builds `image` unless podman already holds its tag. */
export async function ensureProjectImage(
  image: ProjectImage,
  options: BuildImageOptions = {},
): Promise<BuiltImage> {
  if (await imageExists(image.tag)) return { tag: image.tag, bytes: await imageSize(image.tag) };
  return buildProjectImage(image, options);
}

/** The project image called `name`. */
export function projectImage(name: ProjectImage['name']): ProjectImage {
  const image = projectImages.find((candidate) => candidate.name === name);
  if (!image) throw new Error(`no project image called ${name}`);
  return image;
}
