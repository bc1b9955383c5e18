/**
 * Bundles a provisioner CLI and everything it imports at run time into one tree-shaken ES module, the
 * whole application layer of its image: no node_modules, no package manifests, no dev dependencies.
 */
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { build, type Plugin } from 'esbuild';

/** Options of {@link bundleProgram}. */
export interface BundleOptions {
  /** The entry point, e.g. `packages/nfs-subdir/src/cli.ts`. */
  readonly entry: string;
  /** The bundle to write, e.g. `/out/provisioner.mjs`. */
  readonly outfile: string;
}

/** What went into a bundle. */
export interface BundleResult {
  readonly outfile: string;
  readonly bytes: number;
  /** Input files (sources and dependencies) that contributed. */
  readonly inputs: number;
}

/**
 * The workspace packages read their version with `createRequire(import.meta.url)('../package.json')`,
 * which a bundle cannot resolve at run time; this plugin compiles each `src/version.ts` to the
 * constant from its own manifest instead.
 */
const inlineVersions: Plugin = {
  name: 'inline-workspace-versions',
  setup(bundler) {
    bundler.onLoad({ filter: /[\\/]src[\\/]version\.ts$/ }, async ({ path }) => {
      const manifest = JSON.parse(await readFile(join(dirname(path), '..', 'package.json'), 'utf8')) as {
        version?: unknown;
      };
      if (typeof manifest.version !== 'string') throw new Error(`no version next to ${path}`);
      return { contents: `export const version = ${JSON.stringify(manifest.version)};\n`, loader: 'ts' };
    });
  },
};

/**
 * `@kubernetes/client-node`'s package entry re-exports the whole client (generated APIs and models,
 * exec, attach, informers) from modules with top-level side effects (classes extending imported
 * ones), so a bundle would keep all of it: ~80 MiB of RSS. A provisioner uses three of its modules,
 * so the entry resolves to just those; and `KubeConfig`'s module, which takes two names from the
 * generated index, gets just those two. A named import of anything else fails the build rather
 * than the program.
 */
const clientNodeSubset: Plugin = {
  name: 'client-node-subset',
  setup(bundler) {
    const namespace = 'client-node-subset';
    const modules: Readonly<Record<string, readonly string[]>> = {
      entry: [
        "export { KubeConfig } from '@kubernetes/client-node/dist/config.js';",
        "export { HttpMethod, RequestContext } from '@kubernetes/client-node/dist/gen/http/http.js';",
        "export { V1MicroTime } from '@kubernetes/client-node/dist/types.js';",
      ],
      'generated-index': [
        "export { createConfiguration } from './configuration.js';",
        "export { ServerConfiguration } from './servers.js';",
      ],
    };
    bundler.onResolve({ filter: /^@kubernetes\/client-node$/ }, ({ resolveDir }) => ({
      path: 'entry',
      namespace,
      pluginData: resolveDir,
    }));
    bundler.onResolve({ filter: /^\.\/gen\/index\.js$/ }, ({ importer, resolveDir }) =>
      /@kubernetes[\\/]client-node[\\/]dist[\\/]config\.js$/.test(importer)
        ? { path: 'generated-index', namespace, pluginData: join(resolveDir, 'gen') }
        : undefined,
    );
    bundler.onLoad({ filter: /.*/, namespace }, ({ path, pluginData }) => ({
      contents: (modules[path] ?? []).join('\n'),
      resolveDir: pluginData as string,
      loader: 'js',
    }));
  },
};

/**
 * CommonJS dependencies call `require` for Node's built-in modules, which an ES module bundle only
 * has when it makes one.
 */
const requireShim =
  "import { createRequire as __bundleCreateRequire } from 'node:module';\n" +
  'const require = __bundleCreateRequire(import.meta.url);';

/** Bundles `entry` for Node 22.19+ into `outfile`, resolving workspace packages to their sources. */
export async function bundleProgram(options: BundleOptions): Promise<BundleResult> {
  const result = await build({
    entryPoints: [options.entry],
    outfile: options.outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22.19',
    conditions: ['@kube-provisioner/source'],
    // Whitespace and syntax only: names stay readable in stack traces and logs.
    minifyWhitespace: true,
    minifySyntax: true,
    keepNames: true,
    legalComments: 'eof',
    banner: { js: requireShim },
    plugins: [inlineVersions, clientNodeSubset],
    metafile: true,
    logLevel: 'warning',
  });
  const output = Object.values(result.metafile.outputs)[0];
  return {
    outfile: options.outfile,
    bytes: output?.bytes ?? 0,
    inputs: Object.keys(result.metafile.inputs).length,
  };
}
