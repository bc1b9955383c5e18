/**
 * What a project image is built from, as one hash: the files of the build context its Dockerfile
 * copies (the workspace manifests, the lockfile and `packages/`, less what `.dockerignore` keeps out:
 * tests, docs, build output) and the Dockerfile. Recorded on the image as a label, it lets
 * `kube-testenv prepare` and the tests skip a build whose inputs have not changed, where podman's layer
 * cache would still take seconds per image to replay the build.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runCommand } from '../command.ts';

/** Context paths the Dockerfiles copy from (`COPY package.json …`, `COPY packages packages`). */
const contextPaths = ['package.json', 'package-lock.json', '.npmrc', 'packages'] as const;

/** Path segments and suffixes `.dockerignore` keeps out of the build context. */
const ignoredSegments = new Set(['node_modules', 'dist', '.turbo', '.vitest', '.testenv', 'test']);

/** Whether `.dockerignore` keeps `path` (relative to the context) out of the build. */
export function ignoredByContext(path: string): boolean {
  return path.endsWith('.md') || path.split('/').some((segment) => ignoredSegments.has(segment));
}

/**
 * The hex SHA-256 of `dockerfile`, every context file it may copy (tracked or not, as git lists them
 * in `root`) and `extra` (other inputs, e.g. the base image's key).
 */
export async function imageInputsKey(
  root: string,
  dockerfile: string,
  extra: readonly string[],
): Promise<string> {
  const listed = await runCommand(
    'git',
    ['ls-files', '-z', '--cached', '--others', '--exclude-standard', '--', ...contextPaths],
    { cwd: root },
  );
  const files = [...new Set(listed.split('\0'))]
    .filter((path) => path !== '' && !ignoredByContext(path))
    .sort();
  const hash = createHash('sha256');
  for (const value of extra) hash.update(`${value}\0`);
  for (const path of [dockerfile, ...files]) {
    // A tracked file deleted in the working tree is not part of the context.
    const content = await readFile(join(root, path)).catch(() => undefined);
    if (content === undefined) continue;
    hash.update(`${path}\0${content.length}\0`);
    hash.update(content);
  }
  return hash.digest('hex');
}
