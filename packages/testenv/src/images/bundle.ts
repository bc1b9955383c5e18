/**
 * Bundles a provisioner CLI and everything it imports at run time into one tree-shaken ES module, the
 * whole application layer of its image: no node_modules, no package manifests, no dev dependencies.
 */
import { readFile } from 'node:fs/promises';
import { builtinModules } from 'node:module';
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
  /** The dependencies' license notices (`<outfile>.LEGAL.txt`), to ship beside it; none when they have none. */
  readonly notices: string | undefined;
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
 * The provisioners use a small part of two large dependencies, which a bundler cannot trim by
 * itself: their entry modules have top-level side effects (generated classes extending imported
 * ones; CommonJS `require`s), so everything they reach would be kept and loaded, tens of MiB of RSS.
 * Their entries therefore resolve to just the modules used:
 * - `@kubernetes/client-node`: `KubeConfig` and the request types (loaded only for a kubeconfig file;
 *   a provisioner in its pod never evaluates them); and for `KubeConfig`'s module, the two names it takes from the generated index (not the ~900 API and
 *   model classes behind it);
 * - `undici`: the two dispatchers and their request API. client-node's generated HTTP library also imports undici's
 *   `fetch`, which nothing the provisioners run calls (the controller sends through its own
 *   dispatcher); Node.js' own `fetch` stands in, so undici's fetch, WebSocket and cache stay out.
 * A named import of anything else fails the build rather than the program.
 */
const dependencySubsets: Plugin = {
  name: 'dependency-subsets',
  setup(bundler) {
    const namespace = 'dependency-subsets';
    const modules: Readonly<Record<string, readonly string[]>> = {
      'client-node': [
        "export { KubeConfig } from '@kubernetes/client-node/dist/config.js';",
        "export { HttpMethod, RequestContext } from '@kubernetes/client-node/dist/gen/http/http.js';",
      ],
      'client-node-generated-index': [
        "export { createConfiguration } from './configuration.js';",
        "export { ServerConfiguration } from './servers.js';",
      ],
      undici: [
        // As undici's own entry does: the request API lives on every dispatcher.
        "import Dispatcher from 'undici/lib/dispatcher/dispatcher.js';",
        "import api from 'undici/lib/api/index.js';",
        'Object.assign(Dispatcher.prototype, api);',
        "export { default as Agent } from 'undici/lib/dispatcher/agent.js';",
        "export { default as ProxyAgent } from 'undici/lib/dispatcher/proxy-agent.js';",
        'export const fetch = globalThis.fetch;',
      ],
    };
    const subset = (path: string, resolveDir: string) => ({ path, namespace, pluginData: resolveDir });
    bundler.onResolve({ filter: /^@kubernetes\/client-node$/ }, ({ resolveDir }) =>
      subset('client-node', resolveDir),
    );
    bundler.onResolve({ filter: /^undici$/ }, ({ resolveDir }) => subset('undici', resolveDir));
    bundler.onResolve({ filter: /^\.\/gen\/index\.js$/ }, ({ importer, resolveDir }) =>
      /@kubernetes[\\/]client-node[\\/]dist[\\/]config\.js$/.test(importer)
        ? subset('client-node-generated-index', join(resolveDir, 'gen'))
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
 * Node's built-in modules are loaded with `require`, not `import`. Linking an ES module import of a
 * built-in builds its ES module facade, which reads every export, lazy getters included: `node:http`'s
 * `WebSocket` then loads Node's own bundled undici (~750 kB of source), `node:tls`'s
 * `rootCertificates` parses every root certificate: 3 MiB of a provisioner's idle RSS, and start-up
 * time, spent on nothing it uses (docs/benchmarks-history.md, third round). Through `require`, an export is read only when
 * the code reads it.
 */
const builtinsThroughRequire: Plugin = {
  name: 'builtins-through-require',
  setup(bundler) {
    const namespace = 'builtins-through-require';
    const names = builtinModules.filter((name) => !name.startsWith('_'));
    const filter = new RegExp(`^(?:node:)?(?:${names.join('|')})$`);
    bundler.onResolve({ filter }, ({ path, namespace: from }) =>
      // The module's own `require` stays external: the bundle's `require` below loads it.
      from === namespace ? undefined : { path: path.replace(/^node:/, ''), namespace },
    );
    bundler.onLoad({ filter: /.*/, namespace }, ({ path }) => ({
      contents: `module.exports = require(${JSON.stringify(`node:${path}`)});`,
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
    // Whitespace and syntax only: identifiers stay as written, so stack traces and logs read as the
    // sources do. No `keepNames`: its helper runs at every closure creation, ~1 % of the CPU.
    minifyWhitespace: true,
    minifySyntax: true,
    // Beside the bundle, not in it: the notices are not ASCII, and one non-ASCII character makes V8
    // hold the whole source as UTF-16, twice the memory.
    legalComments: 'external',
    banner: { js: requireShim },
    plugins: [inlineVersions, dependencySubsets, builtinsThroughRequire],
    metafile: true,
    logLevel: 'warning',
  });
  const outputs = Object.entries(result.metafile.outputs);
  const isNotices = (path: string) => path.endsWith('.LEGAL.txt');
  const program = outputs.find(([path]) => !isNotices(path));
  return {
    outfile: options.outfile,
    notices: outputs.some(([path]) => isNotices(path)) ? `${options.outfile}.LEGAL.txt` : undefined,
    bytes: program?.[1].bytes ?? 0,
    inputs: Object.keys(result.metafile.inputs).length,
  };
}
