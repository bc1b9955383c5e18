/**
 * No Docker engine runs in CI, so the image cannot be built there; this checks what can be checked
 * without one: the entry point is the provisioner's bin, and the image ships every workspace package
 * that bin needs at run time.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const repoRoot = join(import.meta.dirname, '..', '..', '..');
const dockerfile = readFileSync(join(import.meta.dirname, '..', 'Dockerfile'), 'utf8');
/** Instructions with their continuation lines joined. */
const instructions = dockerfile
  .replace(/\\\n/gu, ' ')
  .split('\n')
  .filter((line) => line.trim() !== '' && !line.startsWith('#'));
const finalStage = instructions.slice(instructions.findLastIndex((line) => line.startsWith('FROM ')));

interface Manifest {
  name: string;
  bin?: Record<string, string>;
  dependencies?: Record<string, string>;
}
const readManifest = (dir: string): Manifest =>
  JSON.parse(readFileSync(join(repoRoot, 'packages', dir, 'package.json'), 'utf8')) as Manifest;

/** Workspace packages the nfs-subdir package needs at run time, itself included. */
function workspaceClosure(dir: string): string[] {
  const dependencies = Object.keys(readManifest(dir).dependencies ?? {})
    .filter((name) => name.startsWith('@kube-provisioner/'))
    .map((name) => name.slice('@kube-provisioner/'.length));
  return [dir, ...dependencies.flatMap(workspaceClosure)].filter(
    (item, index, all) => all.indexOf(item) === index,
  );
}

describe('the NFS provisioner Dockerfile', () => {
  it('runs the nfs-subdir-provisioner bin as its entry point', () => {
    const bin = readManifest('nfs-subdir').bin?.['nfs-subdir-provisioner'];
    expect(bin).toBe('./dist/cli.js');
    const entrypoint = finalStage.find((line) => line.startsWith('ENTRYPOINT '));
    expect(JSON.parse(entrypoint?.slice('ENTRYPOINT '.length) ?? '[]')).toEqual([
      'node',
      join('/app/packages/nfs-subdir', bin ?? ''),
    ]);
  });

  it('ships the manifest and dist/ of every workspace package the bin imports', () => {
    for (const dir of workspaceClosure('nfs-subdir')) {
      expect(finalStage).toContain(`COPY --from=build /src/packages/${dir}/package.json packages/${dir}/`);
      expect(finalStage).toContain(`COPY --from=build /src/packages/${dir}/dist packages/${dir}/dist`);
      expect(existsSync(join(repoRoot, 'packages', dir, 'tsconfig.build.json'))).toBe(true);
    }
  });

  it('installs production dependencies with npm ci and runs as a non-root user with a health check', () => {
    expect(dockerfile).toMatch(/npm ci --omit=dev .*--workspace=@kube-provisioner\/nfs-subdir/u);
    expect(finalStage).toContain('USER node');
    expect(finalStage.find((line) => line.startsWith('HEALTHCHECK '))).toContain('/healthz');
    expect(
      instructions
        .filter((line) => line.startsWith('FROM '))
        .every((line) => /^FROM \$\{NODE_IMAGE\}/u.test(line)),
    ).toBe(true);
    expect(dockerfile).toMatch(/^ARG NODE_IMAGE=node:24-/mu);
  });

  it('copies only files that exist in the build context', () => {
    for (const file of [
      'package.json',
      'package-lock.json',
      '.npmrc',
      'packages/nfs-subdir/tsconfig.build.json',
    ]) {
      expect(existsSync(join(repoRoot, file)), file).toBe(true);
    }
  });
});
