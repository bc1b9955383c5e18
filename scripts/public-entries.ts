/**
 * The published entry points of the workspace (each package's `exports` map, read through the
 * `@kube-provisioner/source` condition) and one TypeScript program over them, for the checks of the
 * public API (`check-public-types.ts`, `api-report.ts`).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

/** The repository root. */
export const root: string = join(import.meta.dirname, '..');

/** The packages published to npm. */
export const publishedPackages: readonly string[] = [
  'controller',
  'safe-fs',
  'hostpath',
  'nfs-subdir',
  'nfs-client',
  'testenv',
  'audit',
];

const sourceCondition = '@kube-provisioner/source';

/**
 * How much an entry point promises (see "Versioning" in the root README): `internal` is published only
 * for this repository's own tooling and promises nothing.
 */
export type Stability = 'stable' | 'experimental' | 'internal';

/**
 * One entry point: the package directory's name, its subpath (`.`, `./client`…), its source and the
 * stability its top doc comment states (a line `Stability: stable…` or `Stability: experimental…`).
 */
export interface EntryPoint {
  readonly packageName: string;
  readonly subpath: string;
  readonly file: string;
  readonly stability: Stability;
}

/** The tier stated in the first doc comment of `file`; an entry point without one is an error. */
function stabilityOf(file: string): Stability {
  const comment = /^(?:#![^\n]*\n)?\s*\/\*\*([\s\S]*?)\*\//u.exec(readFileSync(file, 'utf8'))?.[1] ?? '';
  const tier = /\bStability: (?<tier>stable|experimental|internal)\b/u.exec(comment)?.groups?.tier;
  if (tier === 'stable' || tier === 'experimental' || tier === 'internal') return tier;
  throw new Error(
    `${file}: its top doc comment must state "Stability: stable", "Stability: experimental" or "Stability: internal"`,
  );
}

/** Every published entry point, in `exports` order. */
export const entryPoints: readonly EntryPoint[] = publishedPackages.flatMap((packageName) => {
  const dir = join(root, 'packages', packageName);
  const { exports } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
    exports: Record<string, Record<string, string>>;
  };
  return Object.entries(exports).map(([subpath, conditions]) => {
    const file = join(dir, conditions[sourceCondition] ?? '');
    return { packageName, subpath, file, stability: stabilityOf(file) };
  });
});

/** A program over every entry point, resolved as a NodeNext consumer with the source condition. */
export const program: ts.Program = ts.createProgram(
  entryPoints.map((entry) => entry.file),
  {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    customConditions: [sourceCondition],
    allowImportingTsExtensions: true,
    noEmit: true,
    strict: true,
    types: ['node'],
  },
);

/** The symbols `entry` exports, aliases resolved, in declaration order of the module. */
export function exportsOf(entry: EntryPoint): ts.Symbol[] {
  const checker = program.getTypeChecker();
  const file = program.getSourceFile(entry.file);
  const module = file === undefined ? undefined : checker.getSymbolAtLocation(file);
  if (module === undefined) throw new Error(`cannot read entry point ${entry.file}`);
  return checker.getExportsOfModule(module);
}
