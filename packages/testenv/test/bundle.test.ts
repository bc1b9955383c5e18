// The image's application layer as the image build makes it: one bundle per provisioner CLI, which
// must carry only the parts of its large dependencies it runs, stay ASCII (V8 holds a source with
// one non-ASCII character as UTF-16, twice the memory), keep its license notices beside it, and run.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BundleResult, bundleProgram } from '../src/images/bundle.ts';

const repository = join(import.meta.dirname, '..', '..', '..');
const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

/** Prints, as the program exits, whether Node loaded its own bundled undici. */
const undiciProbe =
  "data:text/javascript,process.on('exit',()=>process.stdout.write('undici loaded: '+process.moduleLoadList.includes('NativeModule internal/deps/undici/undici')))";

describe.each([
  ['kube-hostpath-provisioner', 'packages/hostpath/src/cli.ts'],
  ['nfs-subdir-provisioner', 'packages/nfs-subdir/src/cli.ts'],
])('the bundle of %s', (bin, entry) => {
  let result: BundleResult;
  beforeAll(async () => {
    const dir = await mkdtemp(join(tmpdir(), 'bundle-'));
    dirs.push(dir);
    result = await bundleProgram({ entry: join(repository, entry), outfile: join(dir, `${bin}.mjs`) });
  });

  it("leaves out the client-node APIs and models and undici's fetch, is ASCII, ships its notices, and runs", async () => {
    const bytes = await readFile(result.outfile);
    const text = bytes.toString('latin1');
    for (const absent of ['V1PodSpec', 'ObjectSerializer', 'WebSocket=class']) {
      expect(text, absent).not.toContain(absent);
    }
    expect(bytes.every((byte) => byte < 0x80)).toBe(true);
    expect(result.notices).toBe(`${result.outfile}.LEGAL.txt`);
    expect(await readFile(result.notices ?? '', 'utf8')).toContain('undici');
    const { stdout } = await promisify(execFile)(process.execPath, [result.outfile, '--version']);
    expect(stdout).toMatch(new RegExp(`^${bin} \\d+\\.\\d+\\.\\d+`, 'u'));
  });

  it("loads Node's built-in modules without their ES module facades, so node:http does not pull in Node's own undici", async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [
      `--import=${undiciProbe}`,
      result.outfile,
      '--version',
    ]);
    expect(stdout).toContain(`${bin} `);
    expect(stdout).toMatch(/undici loaded: false$/u);
  });
});
