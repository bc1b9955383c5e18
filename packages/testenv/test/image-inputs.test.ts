/**
 * The inputs key that lets `prepare` skip an unchanged image: it follows what the build context holds
 * (sources, manifests, the Dockerfile), and ignores what `.dockerignore` keeps out (tests, docs).
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ignoredByContext, imageInputsKey } from '../src/images/image-inputs.ts';

let root: string;
const key = () => imageInputsKey(root, 'Dockerfile', ['base-1']);
const write = async (path: string, content: string) => {
  await mkdir(join(root, path, '..'), { recursive: true });
  await writeFile(join(root, path), content);
};

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'image-inputs-'));
  execFileSync('git', ['init', '-q'], { cwd: root });
  await write('Dockerfile', 'FROM scratch\n');
  await write('package.json', '{}\n');
  await write('packages/a/src/main.ts', 'export {};\n');
  await write('packages/a/test/main.test.ts', '// a test\n');
  await write('packages/a/README.md', '# a\n');
});

afterEach(() => rm(root, { recursive: true, force: true }));

describe('imageInputsKey', () => {
  it('changes with a source, a manifest, the Dockerfile or an extra input, untracked files included', async () => {
    const before = await key();
    expect(await key()).toBe(before);
    await write('packages/a/src/main.ts', 'export const changed = 1;\n');
    const afterSource = await key();
    expect(afterSource).not.toBe(before);
    await write('package.json', '{"name":"x"}\n');
    const afterManifest = await key();
    expect(afterManifest).not.toBe(afterSource);
    await write('Dockerfile', 'FROM scratch\nENV A=1\n');
    const afterDockerfile = await key();
    expect(afterDockerfile).not.toBe(afterManifest);
    expect(await imageInputsKey(root, 'Dockerfile', ['base-2'])).not.toBe(afterDockerfile);
  });

  it('ignores tests, docs and build output, which the build context leaves out', async () => {
    const before = await key();
    await write('packages/a/test/main.test.ts', '// another test\n');
    await write('packages/a/README.md', '# a, edited\n');
    await write('packages/a/dist/main.js', 'export {};\n');
    expect(await key()).toBe(before);
    expect(ignoredByContext('packages/a/node_modules/x/index.js')).toBe(true);
    expect(ignoredByContext('packages/a/src/test-kit.ts')).toBe(false);
  });
});
