/**
 * Ours as users install it: the workspace packages packed by `npm pack` (what `npm publish` uploads)
 * and installed by `npm install` into a fresh project, third-party dependencies from the registry,
 * beside the custom-provisioner example's sources copied as a user copies them, both as they are
 * (run by Node's type stripping) and compiled to JavaScript (types stripped ahead, as `tsc` would).
 * Every program then runs the installed packages' compiled JavaScript with plain `node`: no bundle,
 * no flags.
 */
import { execFile } from 'node:child_process';
import { access, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { stripTypeScriptTypes } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { OursProgram } from './ours-program.ts';
import type { Implementation } from './provisioner-process.ts';

/** The workspace root, from `src/` and `dist/` alike. */
const workspaceRoot = join(import.meta.dirname, '..', '..', '..');

/** The workspace packages a user installs to run every program, by directory under `packages/`. */
const packedPackages = ['controller', 'safe-fs', 'hostpath', 'nfs-subdir', 'nfs-client'] as const;

/** The example's files a user copies; it runs them with Node's type stripping. */
const exampleSources = ['main.ts', 'directory-provisioner.ts'] as const;

/** One installed program and how the bench starts it. */
export interface PackedProgram {
  /** Its name in reports: the example's or the CLI's. */
  readonly label: string;
  readonly implementation: Implementation;
}

/** A project with ours installed from packed packages. */
export interface PackedInstall {
  /** The project directory: `import('@kube-provisioner/controller')` resolves from here. */
  readonly dir: string;
  readonly programs: readonly PackedProgram[];
  /** Removes the project. */
  close(): Promise<void>;
}

const run = promisify(execFile);

/**
 * Packs the workspace packages (their `dist/` must be built: `npm run build`), or takes the tarballs
 * an earlier checkout packed into `tarballs`, and installs them with the example's sources.
 */
export async function installPackedPrograms(
  log: (message: string) => void,
  tarballs?: string,
): Promise<PackedInstall> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-packed-'));
  try {
    const packs = tarballs ?? (await packWorkspace(join(dir, 'tarballs'), log));
    const project = join(dir, 'project');
    await mkdir(project);
    await writeFile(join(project, 'package.json'), await projectManifest(packs));
    await copyExample(project);
    const started = performance.now();
    await run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], {
      cwd: project,
      maxBuffer: 16 * 1024 * 1024,
    });
    log(`installed ${packs} into ${project} in ${((performance.now() - started) / 1000).toFixed(0)} s`);
    const bin = (name: string): OursProgram => script(join(project, 'node_modules', '.bin', name));
    const nfsFlags = (root: string, port: number): readonly string[] => [
      '--nfs-server=127.0.0.1',
      '--nfs-path=/export',
      `--mount-root=${root}`,
      `--metrics-port=${port}`,
    ];
    return {
      dir: project,
      programs: [
        {
          label: 'custom provisioner (example, compiled)',
          implementation: { name: 'library', program: script(join(project, 'dist', 'main.js')) },
        },
        {
          label: 'custom provisioner (example, .ts run by type stripping)',
          implementation: { name: 'library', program: script(join(project, 'src', 'main.ts')) },
        },
        {
          label: 'kube-hostpath-provisioner',
          implementation: { name: 'ours', program: bin('kube-hostpath-provisioner') },
        },
        {
          label: 'nfs-subdir-provisioner',
          implementation: {
            name: 'library',
            program: bin('nfs-subdir-provisioner'),
            placementFlags: nfsFlags,
          },
        },
        {
          label: 'nfs-client-provisioner',
          implementation: {
            name: 'library',
            program: bin('nfs-client-provisioner'),
            placementFlags: nfsFlags,
          },
        },
      ],
      close: () => rm(dir, { recursive: true, force: true }),
    };
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}

function script(path: string): OursProgram {
  return { build: 'package', script: path, nodeFlags: [], close: async () => {} };
}

/** The example's sources into `src/`, and into `dist/` with types stripped and imports renamed `.js`. */
async function copyExample(project: string): Promise<void> {
  const example = join(dirname(exampleManifest()), 'src');
  await mkdir(join(project, 'src'));
  await mkdir(join(project, 'dist'));
  for (const file of exampleSources) {
    const source = await readFile(join(example, file), 'utf8');
    await writeFile(join(project, 'src', file), source);
    const compiled = stripTypeScriptTypes(source).replace(
      /(from\s+['"]\.{1,2}\/[^'"]+)\.ts(['"])/gu,
      '$1.js$2',
    );
    await writeFile(join(project, 'dist', file.replace(/\.ts$/u, '.js')), compiled);
  }
}

function exampleManifest(): string {
  return fileURLToPath(import.meta.resolve('@kube-provisioner/example-custom-provisioner/package.json'));
}

/** `npm pack`s the built workspace packages into `destination`. */
async function packWorkspace(destination: string, log: (message: string) => void): Promise<string> {
  for (const name of packedPackages) {
    try {
      await access(join(workspaceRoot, 'packages', name, 'dist', 'index.js'));
    } catch {
      throw new Error(`packages/${name} is not built: run \`npm run build\` first`);
    }
  }
  await mkdir(destination, { recursive: true });
  const workspaces = packedPackages.flatMap((name) => ['--workspace', join('packages', name)]);
  await run('npm', ['pack', ...workspaces, '--pack-destination', destination, '--loglevel=error'], {
    cwd: workspaceRoot,
    maxBuffer: 16 * 1024 * 1024,
  });
  log(`packed ${packedPackages.join(', ')} into ${destination}`);
  return destination;
}

/**
 * The project's manifest: each tarball as a dependency, overrides so the packages' own
 * `@kube-provisioner/*` dependencies resolve to the tarballs too, and client-node at the example's
 * range (its code imports it).
 */
async function projectManifest(tarballs: string): Promise<string> {
  const files = await readdir(tarballs);
  const dependencies: Record<string, string> = {};
  const overrides: Record<string, string> = {};
  for (const name of packedPackages) {
    const file = files.find((candidate) => candidate.startsWith(`kube-provisioner-${name}-`));
    if (file === undefined) throw new Error(`${tarballs} has no kube-provisioner-${name}-*.tgz`);
    const pkg = `@kube-provisioner/${name}`;
    dependencies[pkg] = `file:${join(tarballs, file)}`;
    overrides[pkg] = `$${pkg}`;
  }
  const example = JSON.parse(await readFile(exampleManifest(), 'utf8')) as {
    dependencies: Record<string, string>;
  };
  dependencies['@kubernetes/client-node'] = example.dependencies['@kubernetes/client-node'] as string;
  const manifest = { name: 'packed-provisioners', private: true, type: 'module', dependencies, overrides };
  return `${JSON.stringify(manifest, null, 2)}\n`;
}
