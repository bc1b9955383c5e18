/**
 * The project's container images, built with podman from the repository root on the local base
 * image ({@link ensureBaseImage}); the Dockerfiles' own default base stays the official Node image.
 * Each is built for linux/amd64 and linux/arm64 from the same Dockerfile, tagged `<tag>-<arch>`;
 * `<tag>` names the host's architecture locally (what the tests, `podman save` and the real node use),
 * and `npm run image` writes the manifest list of both, what a registry serves under `<tag>`, as an OCI
 * layout ({@link writeManifestList}): podman 4's image listing fails on a local manifest list.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { baseImage, baseImageKey, defaultImagesCacheDir, ensureBaseImage } from './base-image.ts';
import {
  ensureForeignRootfs,
  type ForeignArchitecture,
  foreignArchitectures,
  foreignRootfsImage,
  type RuntimeExtras,
} from './foreign-rootfs.ts';
import { imageInputsKey } from './image-inputs.ts';
import { containerLimits, imageSize, podman } from './podman.ts';

/** The architectures every project image is built for (`linux/<arch>`). */
export type ImageArchitecture = 'amd64' | 'arm64';

/** {@link ImageArchitecture}s in build order: the host's first. */
export const imageArchitectures: readonly ImageArchitecture[] = ['amd64', 'arm64'];

/** The architecture this machine runs natively, whose images build on the local base. */
export const hostArchitecture: ImageArchitecture = process.arch === 'arm64' ? 'arm64' : 'amd64';

/** One image: its Dockerfile (relative to the repository root) and the tag its manifests name. */
export interface ProjectImage {
  readonly name: 'nfs-subdir-provisioner' | 'hostpath';
  readonly dockerfile: string;
  /** The manifest list's tag; each architecture's image is `<tag>-<arch>` ({@link architectureTag}). */
  readonly tag: string;
  /** What its runtime holds beyond node, as Debian packages (for a non-native architecture's tree). */
  readonly runtime: RuntimeExtras;
}

/** The images `npm run image` builds, in that order. */
export const projectImages: readonly ProjectImage[] = [
  {
    name: 'nfs-subdir-provisioner',
    dockerfile: 'examples/nfs/Dockerfile',
    tag: 'ghcr.io/kube-provisioner/nfs-subdir-provisioner:0.1.0',
    runtime: { packages: [], programs: [] },
  },
  {
    name: 'hostpath',
    dockerfile: 'packages/hostpath/Dockerfile',
    tag: 'ghcr.io/kube-provisioner/hostpath:0.1.0',
    // xfs_quota (project quotas of classes with `enforceSize`) and what it links.
    runtime: {
      packages: ['xfsprogs', 'libedit2', 'libbsd0', 'libmd0', 'libtinfo6'],
      programs: ['/usr/sbin/xfs_quota'],
    },
  },
];

/** The repository root: the build context of every Dockerfile (same depth from `src/` and `dist/`). */
export const repositoryRoot: string = fileURLToPath(new URL('../../../../', import.meta.url));

/** `ghcr.io/kube-provisioner/hostpath:0.1.0-arm64`: the local tag of one architecture's image. */
export function architectureTag(image: ProjectImage, architecture: ImageArchitecture): string {
  return `${image.tag}-${architecture}`;
}

/** Options of {@link buildProjectImage} and {@link ensureProjectImage}. */
export interface BuildImageOptions {
  /** Receives a line per build step, base image included. */
  readonly onProgress?: (message: string) => void;
  readonly env?: NodeJS.ProcessEnv;
  /** Which architectures; defaults to {@link imageArchitectures}. */
  readonly architectures?: readonly ImageArchitecture[];
}

/** A built image of one architecture and its size in bytes, base layers included. */
export interface BuiltImage {
  /** Its {@link architectureTag}. */
  readonly tag: string;
  readonly architecture: ImageArchitecture;
  readonly bytes: number;
  /** `false` when {@link ensureProjectImage} found it built from the same inputs. */
  readonly built: boolean;
}

/** Records on an image the {@link imageInputsKey} it was built from. */
const inputsLabel = 'io.kube-provisioner.inputs';

/**
 * Builds `image` for one architecture (the host's unless `architecture` says otherwise) on the local
 * base (made first if missing). Another architecture's `runtime` stage is replaced by its assembled
 * tree ({@link ensureForeignRootfs}), so no step runs foreign code. Podman's layer cache makes a
 * rebuild of unchanged sources take seconds. The output goes to `<images cache>/<name>.build.log`.
 */
export async function buildProjectImage(
  image: ProjectImage,
  architecture: ImageArchitecture = hostArchitecture,
  options: BuildImageOptions = {},
): Promise<BuiltImage> {
  await ensureBaseImage(options);
  const logDir = defaultImagesCacheDir(options.env);
  await mkdir(logDir, { recursive: true });
  const logFile = join(logDir, `${image.name}-${architecture}.build.log`);
  await writeFile(logFile, '');
  const tag = architectureTag(image, architecture);
  const cross: string[] = [];
  if (architecture !== hostArchitecture) {
    const rootfs = await ensureForeignRootfs(foreignArchitecture(architecture), image.runtime, {
      workDir: logDir,
      logFile,
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
    });
    cross.push('--arch', architecture, '--build-context', `runtime=container-image://${rootfs}`);
  }
  options.onProgress?.(`building ${tag} from ${image.dockerfile} (log: ${logFile})`);
  await podman(
    [
      'build',
      // `npm install` in the build reaches the registry the way the host does.
      '--network=host',
      ...containerLimits,
      '--build-arg',
      `NODE_IMAGE=${baseImage}`,
      // Docker sets it; podman 4 does not, and the bundle stage runs on the build machine.
      '--build-arg',
      `BUILDPLATFORM=linux/${hostArchitecture}`,
      ...cross,
      '--label',
      `${inputsLabel}=${await inputsKey(image, architecture)}`,
      '--file',
      image.dockerfile,
      '--tag',
      tag,
      '.',
    ],
    { cwd: repositoryRoot, logFile },
  );
  return { tag, architecture, bytes: await imageSize(tag), built: true };
}

/**
 * Builds each architecture of `image` whose tag podman lacks or holds from other inputs (sources,
 * Dockerfile, base, runtime tree: {@link imageInputsKey}), and tags the host's as `image.tag`. A warm
 * run only hashes the inputs.
 */
export async function ensureProjectImage(
  image: ProjectImage,
  options: BuildImageOptions = {},
): Promise<readonly BuiltImage[]> {
  const images: BuiltImage[] = [];
  for (const architecture of options.architectures ?? imageArchitectures) {
    const tag = architectureTag(image, architecture);
    const current = await podman([
      'image',
      'inspect',
      '--format',
      `{{index .Labels "${inputsLabel}"}}`,
      tag,
    ]).then(
      (label) => label.trim(),
      () => undefined,
    );
    images.push(
      current !== undefined && current === (await inputsKey(image, architecture))
        ? { tag, architecture, bytes: await imageSize(tag), built: false }
        : await buildProjectImage(image, architecture, options),
    );
  }
  await tagHostImage(image);
  return images;
}

/** Points `image.tag` at the host architecture's image unless it already names it. */
export async function tagHostImage(image: ProjectImage): Promise<void> {
  const id = (name: string) =>
    podman(['image', 'inspect', '--format', '{{.Id}}', name]).then(
      (text) => text.trim(),
      () => undefined,
    );
  const host = architectureTag(image, hostArchitecture);
  if ((await id(image.tag)) !== (await id(host))) await podman(['tag', host, image.tag]);
}

/**
 * Writes the manifest list of `images` (one per architecture) under `image.tag` as an OCI layout in
 * `<images cache>/manifests/<name>`, from which `skopeo copy --all oci:<dir> docker://<registry>/…`
 * publishes both architectures under one tag. The list is assembled in podman and removed again.
 */
export async function writeManifestList(
  image: ProjectImage,
  images: readonly BuiltImage[],
  env?: NodeJS.ProcessEnv,
): Promise<string> {
  const dir = join(defaultImagesCacheDir(env), 'manifests', image.name);
  const list = `localhost/kube-testenv/manifest-list:${image.name}`;
  await podman(['manifest', 'rm', list]).catch(() => undefined);
  await podman(['manifest', 'create', list]);
  try {
    for (const built of images) await podman(['manifest', 'add', list, `containers-storage:${built.tag}`]);
    await rm(dir, { recursive: true, force: true });
    await mkdir(dirname(dir), { recursive: true });
    await podman(['manifest', 'push', '--all', list, `oci:${dir}:${image.tag.split(':').at(-1)}`]);
  } finally {
    await podman(['manifest', 'rm', list]).catch(() => undefined);
  }
  return dir;
}

function foreignArchitecture(architecture: ImageArchitecture): ForeignArchitecture {
  if (!(architecture in foreignArchitectures)) {
    throw new Error(
      `${architecture} images are built natively only, and this machine is ${hostArchitecture}`,
    );
  }
  return architecture as ForeignArchitecture;
}

/** The inputs key of one architecture's build: sources, Dockerfile, base and (foreign) runtime tree. */
function inputsKey(image: ProjectImage, architecture: ImageArchitecture): Promise<string> {
  const runtime =
    architecture === hostArchitecture
      ? 'native'
      : foreignRootfsImage(foreignArchitecture(architecture), image.runtime);
  return imageInputsKey(repositoryRoot, image.dockerfile, [baseImageKey(), architecture, runtime]);
}

/** The project image called `name`. */
export function projectImage(name: ProjectImage['name']): ProjectImage {
  const image = projectImages.find((candidate) => candidate.name === name);
  if (!image) throw new Error(`no project image called ${name}`);
  return image;
}
