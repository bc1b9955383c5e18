/**
 * What the container end-to-end tests cannot see: the Dockerfiles' default base is the official Node
 * image (the tests build on a local one), the bundle is the package's bin, the image runs as root
 * like upstream's, and the deployment manifests name the tag `npm run image` builds.
 */
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  architectureTag,
  imageArchitectures,
  type ProjectImage,
  projectImages,
  repositoryRoot,
} from '../src/images/project-images.ts';
import { binSource } from '../src/program-process.ts';

/** Where each image's program and manifests live. */
const sources: Record<ProjectImage['name'], { packageDir: string; bin: string; manifests: string[] }> = {
  'nfs-subdir-provisioner': {
    packageDir: 'packages/nfs-subdir',
    bin: 'nfs-subdir-provisioner',
    manifests: ['examples/nfs/deploy/deployment.yaml'],
  },
  hostpath: {
    packageDir: 'packages/hostpath',
    bin: 'kube-hostpath-provisioner',
    manifests: ['packages/hostpath/deploy/daemonset.yaml', 'packages/hostpath/deploy/deployment.yaml'],
  },
};

/** The Dockerfiles' reference to their base, written out (not a placeholder of this file). */
const nodeImage = '$' + '{NODE_IMAGE}';

const read = (path: string): string => readFileSync(join(repositoryRoot, path), 'utf8');

/** Dockerfile instructions with continuation lines joined, comments dropped. */
function instructions(dockerfile: string): string[] {
  return dockerfile
    .replace(/\\\n/gu, ' ')
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.startsWith('#'));
}

describe.each(projectImages)('the $name image', (image) => {
  const { packageDir, bin, manifests } = sources[image.name];
  const lines = instructions(read(image.dockerfile));
  const finalStage = lines.slice(lines.findLastIndex((line) => line.startsWith('FROM ')));

  it('defaults to the official Node 24 image, builds on NODE_IMAGE and ships FROM scratch', () => {
    expect(lines[0]).toMatch(/^ARG NODE_IMAGE=node:24-[a-z]+$/u);
    const stages = lines.filter((line) => line.startsWith('FROM '));
    expect(stages).toEqual([
      `FROM --platform=$BUILDPLATFORM ${nodeImage} AS build`,
      `FROM ${nodeImage} AS runtime`,
      'FROM scratch',
    ]);
  });

  it('builds for arm64 without running arm64 code: the bundle on the build platform, the runtime stage replaceable', () => {
    // `--build-context runtime=…` replaces the stage called runtime; its tree is copied from /rootfs.
    expect(lines).toContain(`FROM ${nodeImage} AS runtime`);
    expect(lines.filter((line) => line.includes('--from=runtime'))).toEqual([
      'COPY --from=runtime /rootfs/ /',
    ]);
    expect(imageArchitectures).toEqual(['amd64', 'arm64']);
    expect(architectureTag(image, 'arm64')).toBe(`${image.tag}-arm64`);
  });

  it('bundles the source of its bin and runs that one file (notices beside it) as root', () => {
    const source = relative(repositoryRoot, binSource(join(repositoryRoot, packageDir), bin));
    const bundle = `/out/${bin}.mjs`;
    expect(lines.some((line) => line.includes(`cli.ts bundle ${source} ${bundle}`))).toBe(true);
    expect(finalStage).toContain('COPY --from=build /out/ /app/');
    // Besides the bundle only node, its libraries and the CA certificates (runtime-rootfs.sh).
    expect(finalStage.filter((line) => line.startsWith('COPY '))).toEqual([
      'COPY --from=runtime /rootfs/ /',
      'COPY --from=build /out/ /app/',
    ]);
    expect(finalStage).toContain(`ENTRYPOINT ["node", "--heap-growing-percent=20", "/app/${bin}.mjs"]`);
    expect(finalStage.some((line) => line.startsWith('USER '))).toBe(false);
  });

  it('is the image its deployment manifests name', () => {
    for (const manifest of manifests) expect(read(manifest)).toContain(`image: ${image.tag}\n`);
  });
});
