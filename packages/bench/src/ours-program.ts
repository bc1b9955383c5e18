/**
 * How the bench runs ours. By default as its image runs it: the CLI bundled by the image's own
 * bundler (`kube-testenv bundle`, tree-shaken, one ES module) with the image's Node.js flags, so
 * memory and start-up are what operators get. From TypeScript sources (type stripping) on request,
 * for CPU profiles with readable names and lines.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleProgram } from '@kube-provisioner/testenv/internal';

/**
 * `image`: the bundle under the image's Node.js flags; `sources`: the CLI's TypeScript sources;
 * `package`: the compiled JavaScript installed from its npm package, run with plain `node`.
 */
export type OursBuild = 'image' | 'sources' | 'package';

/** The builds `--ours` chooses from (`packed-programs.ts` makes `package` ones). */
export const oursBuilds: readonly OursBuild[] = ['image', 'sources'];

/**
 * The image's Node.js flags, its `NODE_OPTIONS` and its entrypoint's (packages/hostpath/Dockerfile; a
 * test keeps them equal): a 1 MiB young generation instead of the up to 64 MiB per semi-space V8 picks
 * on a large host, and the old generation grown by 20 % per step instead of V8's up to 4×.
 */
export const imageNodeFlags: readonly string[] = ['--max-semi-space-size=1', '--heap-growing-percent=20'];

/** A runnable build of ours. */
export interface OursProgram {
  readonly build: OursBuild;
  /** The script `node` runs. */
  readonly script: string;
  /** Node.js flags that come with the build. */
  readonly nodeFlags: readonly string[];
  /** Removes what preparing it wrote. */
  close(): Promise<void>;
}

/** `node`'s arguments that run `program` with more Node.js flags and the CLI's own arguments. */
export function nodeArgs(
  program: OursProgram,
  nodeFlags: readonly string[],
  cliArgs: readonly string[],
): string[] {
  return [...program.nodeFlags, ...nodeFlags, program.script, ...cliArgs];
}

/** The hostpath CLI next to the package entry point: `src/cli.ts` from source, `dist/cli.js` when built. */
export function hostpathCli(): string {
  const entry = fileURLToPath(import.meta.resolve('@kube-provisioner/hostpath'));
  return join(dirname(entry), `cli${extname(entry)}`);
}

/**
 * The custom-provisioner example's entry point (TypeScript only: it has no build). Its provisioner
 * makes a directory and returns the PV, as the Go library's hostpath example does, so it measures
 * the library itself where the hostpath CLI adds safe-fs's crash-safe, isolating create.
 */
export function libraryExampleCli(): string {
  const manifest = fileURLToPath(
    import.meta.resolve('@kube-provisioner/example-custom-provisioner/package.json'),
  );
  return join(dirname(manifest), 'src', 'main.ts');
}

/**
 * Builds (for `image`) or locates (for `sources`) ours: the hostpath CLI unless `cli` names another
 * program, whose bundle is then called `name`.
 */
export async function prepareOurs(
  build: OursBuild,
  log: (message: string) => void,
  cli: string = hostpathCli(),
  name = 'kube-hostpath-provisioner',
): Promise<OursProgram> {
  if (build === 'sources') {
    const nodeFlags = cli.endsWith('.ts') ? ['--conditions=@kube-provisioner/source'] : [];
    return { build, script: cli, nodeFlags, close: async () => {} };
  }
  const dir = await mkdtemp(join(tmpdir(), 'bench-ours-'));
  const bundled = await bundleProgram({ entry: cli, outfile: join(dir, `${name}.mjs`) });
  log(
    `${name}: bundled ${bundled.inputs} files into ${bundled.outfile} (${(bundled.bytes / 1e6).toFixed(1)} MB)`,
  );
  return {
    build,
    script: bundled.outfile,
    nodeFlags: imageNodeFlags,
    close: () => rm(dir, { recursive: true, force: true }),
  };
}
