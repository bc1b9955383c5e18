// What an outside team does first: install only the packed tarballs (plus its own client-node and
// prom-client, at the lowest and at the newest version the peer ranges allow) into a fresh project,
// typecheck the root README's "Write a provisioner" example under strict NodeNext, and run the
// controller README's test file. Slow (two registry installs), hence an end-to-end test.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify, stripVTControlCharacters } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readmeTestFile, writeAProvisionerExample } from './support/readme-blocks.ts';

const run = promisify(execFile);
const repoRoot = join(import.meta.dirname, '../../..');
const published = ['controller', 'hostpath', 'nfs-client', 'nfs-subdir', 'safe-fs', 'testenv'];

interface Manifest {
  readonly peerDependencies?: Record<string, string>;
  readonly devDependencies?: Record<string, string>;
}
const manifest = (dir: string): Manifest =>
  JSON.parse(readFileSync(join(repoRoot, dir, 'package.json'), 'utf8')) as Manifest;
const peers = manifest('packages/controller').peerDependencies ?? {};
const tools = manifest('.').devDependencies ?? {};

/** The lowest version a peer range names: its first `^x.y.z`. */
function lowest(range: string | undefined): string {
  const match = /\^(\d+\.\d+\.\d+)/u.exec(range ?? '');
  if (match?.[1] === undefined) throw new Error(`no lowest version in ${range}`);
  return match[1];
}

// The parent `npm run` exports npm_config_* (workspace, prefix…) that would redirect the child npm;
// how to reach the registry (CA file, registry, proxies) stays. The machine's CA otherwise reaches
// the child only through NODE_EXTRA_CA_CERTS, which turbo passes through (turbo.json).
const registryConfig = new Set(
  [
    'cafile',
    'ca',
    'cert',
    'key',
    'registry',
    'strict_ssl',
    'proxy',
    'https_proxy',
    'noproxy',
    'globalconfig',
    'userconfig',
  ].map((name) => `npm_config_${name}`),
);
const env = Object.fromEntries(
  Object.entries(process.env).filter(([key]) => {
    const lower = key.toLowerCase();
    return !lower.startsWith('npm_') || registryConfig.has(lower);
  }),
);

async function npm(cwd: string, args: string[]): Promise<string> {
  const { stdout } = await run('npm', [...args, '--no-audit', '--no-fund'], {
    cwd,
    env,
    maxBuffer: 64 * 1024 * 1024,
  });
  return stdout;
}

/** Runs a binary of the fixture's own node_modules on this (supported) Node. */
async function tool(cwd: string, script: string, args: string[]): Promise<string> {
  try {
    const { stdout, stderr } = await run(process.execPath, [join(cwd, 'node_modules', script), ...args], {
      cwd,
      env,
      maxBuffer: 64 * 1024 * 1024,
    });
    return stdout + stderr;
  } catch (err) {
    const { stdout = '', stderr = '' } = err as { stdout?: string; stderr?: string };
    throw new Error(`${script} ${args.join(' ')} failed:\n${stdout}${stderr}`, { cause: err });
  }
}

let tarballs: string[] = [];
let packDir = '';
const projects: string[] = [];

beforeAll(async () => {
  // The tarballs ship dist/: bring it up to date (incremental, a no-op after `npm run build`).
  await run(process.execPath, [join(repoRoot, 'node_modules/typescript/bin/tsc'), '-b', 'tsconfig.json'], {
    cwd: repoRoot,
  });
  packDir = mkdtempSync(join(tmpdir(), 'kp-pack-'));
  await npm(repoRoot, [
    'pack',
    '--pack-destination',
    packDir,
    ...published.flatMap((name) => ['-w', `packages/${name}`]),
  ]);
  tarballs = readdirSync(packDir).map((file) => join(packDir, file));
}, 600_000);

afterAll(() => {
  for (const dir of [packDir, ...projects]) if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

const tsconfig = {
  compilerOptions: {
    target: 'es2024',
    module: 'nodenext',
    moduleResolution: 'nodenext',
    strict: true,
    exactOptionalPropertyTypes: true,
    noUncheckedIndexedAccess: true,
    // client-node's own declarations need @types/ws; a consumer skips them as the workspace does.
    skipLibCheck: true,
    noEmit: true,
    types: ['node'],
  },
  include: ['*.ts'],
};

describe.each([
  {
    label: 'lowest',
    clientNode: lowest(peers['@kubernetes/client-node']),
    promClient: lowest(peers['prom-client']),
  },
  { label: 'newest', clientNode: peers['@kubernetes/client-node'], promClient: peers['prom-client'] },
])('a fresh project with the packed tarballs and the $label peers', ({ clientNode, promClient }) => {
  it('installs one copy of each peer, typechecks the README example and passes the README test file', async () => {
    expect(tarballs).toHaveLength(published.length);
    const dir = mkdtempSync(join(tmpdir(), 'kp-consumer-'));
    projects.push(dir);
    writeFileSync(
      join(dir, 'package.json'),
      JSON.stringify({ name: 'consumer', private: true, type: 'module' }, null, 2),
    );
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(tsconfig, null, 2));
    writeFileSync(join(dir, 'write-a-provisioner.ts'), writeAProvisionerExample());
    const testFile = readmeTestFile();
    writeFileSync(join(dir, testFile.name), testFile.source);
    await npm(dir, [
      'install',
      ...tarballs,
      `@kubernetes/client-node@${clientNode}`,
      `prom-client@${promClient}`,
      `typescript@${tools.typescript}`,
      `vitest@${tools.vitest}`,
      `@types/node@${tools['@types/node']}`,
    ]);

    for (const pkg of published) {
      // Every tarball carries the license, the notice and the changelog.
      for (const file of ['LICENSE', 'NOTICE', 'CHANGELOG.md']) {
        expect(existsSync(join(dir, 'node_modules/@kube-provisioner', pkg, file))).toBe(true);
      }
      // Peers are shared, never nested under a package of ours.
      expect(existsSync(join(dir, 'node_modules/@kube-provisioner', pkg, 'node_modules/@kubernetes'))).toBe(
        false,
      );
      expect(existsSync(join(dir, 'node_modules/@kube-provisioner', pkg, 'node_modules/prom-client'))).toBe(
        false,
      );
    }
    const installed = JSON.parse(
      readFileSync(join(dir, 'node_modules/@kubernetes/client-node/package.json'), 'utf8'),
    ) as { version: string };
    if (!clientNode?.startsWith('^')) expect(installed.version).toBe(clientNode);

    await tool(dir, 'typescript/bin/tsc', ['-p', 'tsconfig.json']);
    const output = await tool(dir, 'vitest/vitest.mjs', ['run', testFile.name]);
    expect(stripVTControlCharacters(output)).toMatch(/Tests\s+2 passed \(2\)/u);
  }, 900_000);
});
