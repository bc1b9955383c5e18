/** The `kube-testenv` subcommands about images: `image-base`, `images` and `bundle`. */
import { baseImage, ensureBaseImage } from './base-image.ts';
import { bundleProgram } from './bundle.ts';
import { compressedImageSize, formatImageSize, imageSize } from './podman.ts';
import {
  buildProjectImage,
  imageArchitectures,
  projectImages,
  tagHostImage,
  writeManifestList,
} from './project-images.ts';

type Log = (message: string) => void;

/** `image-base`: makes the local base image present; prints its tag. */
export async function imageBaseCommand(log: Log): Promise<number> {
  const { image, action } = await ensureBaseImage({ onProgress: log });
  log(`${image}: ${action}`);
  process.stdout.write(`${image}\n`);
  return 0;
}

/**
 * `images`: builds the base if missing, then every project image for each architecture and writes
 * the manifest list of both (an OCI layout to publish under the image's tag); prints each architecture's size, and gzip-compressed,
 * what a node pulls. The base is only the build's input: the images carry node, its libraries and
 * the bundle, not the base's file system.
 */
export async function imagesCommand(log: Log): Promise<number> {
  await ensureBaseImage({ onProgress: log });
  const rows = [[baseImage, formatImageSize(await imageSize(baseImage)), '(build input)']];
  for (const image of projectImages) {
    const built = [];
    for (const architecture of imageArchitectures) {
      const one = await buildProjectImage(image, architecture, { onProgress: log });
      built.push(one);
      rows.push([
        one.tag,
        formatImageSize(one.bytes),
        `${formatImageSize(await compressedImageSize(one.tag))} compressed, linux/${architecture}`,
      ]);
    }
    await tagHostImage(image);
    const list = await writeManifestList(image, built);
    rows.push([image.tag, '', `manifest list of ${imageArchitectures.join(', ')}: oci:${list}`]);
  }
  const width = Math.max(...rows.map(([tag]) => tag?.length ?? 0));
  for (const [tag = '', size = '', note = ''] of rows) {
    process.stdout.write(`${tag.padEnd(width)}  ${size.padStart(7)}  ${note}\n`);
  }
  return 0;
}

/** `bundle <entry> <outfile>`: the application layer of an image as one file. */
export async function bundleCommand(args: readonly string[], log: Log): Promise<number> {
  const [entry, outfile] = args;
  if (!entry || !outfile || args.length > 2) {
    log('bundle needs an entry point and an output file');
    return 2;
  }
  const result = await bundleProgram({ entry, outfile });
  log(`bundled ${result.inputs} files into ${result.outfile} (${formatImageSize(result.bytes)})`);
  return 0;
}
