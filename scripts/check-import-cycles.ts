/**
 * CI check: no import cycle among the modules of a package's `src/`, type-only imports and re-exports
 * included. A cycle makes evaluation order decide whether a binding is initialised, and even a
 * type-only one means two modules own parts of one concept. Reads the imports with TypeScript's
 * pre-processor (no type checking), follows the relative ones, and prints each cycle and exits 1 if
 * there is any. Arguments name the package directories to check (`packages/controller`…); without
 * any, every package and example is checked.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

const root = join(import.meta.dirname, '..');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.[cm]?tsx?$/u.test(entry.name))
    .map((entry) => join(entry.parentPath, entry.name));
}

/** The modules `file` imports or re-exports by a relative path that exists. */
function importsOf(file: string): string[] {
  const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  return importedFiles
    .map(({ fileName }) => fileName)
    .filter((specifier) => specifier.startsWith('.'))
    .map((specifier) => resolve(dirname(file), specifier))
    .filter((target) => existsSync(target));
}

/** The strongly connected components of more than one module, or of one that imports itself (Tarjan). */
function cycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, index.size);
    low.set(node, index.get(node) ?? 0);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node) ?? 0, low.get(next) ?? 0));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node) ?? 0, index.get(next) ?? 0));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string | undefined;
    do {
      member = stack.pop();
      if (member === undefined) break;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || (graph.get(node) ?? []).includes(node)) found.push(component.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

const given = process.argv.slice(2).map((dir) => resolve(root, dir));
const packageDirs =
  given.length > 0
    ? given
    : ['packages', 'examples'].flatMap((group) =>
        readdirSync(join(root, group), { withFileTypes: true })
          .filter((entry) => entry.isDirectory())
          .map((entry) => join(root, group, entry.name)),
      );

const problems: string[] = [];
for (const dir of packageDirs) {
  const src = join(dir, 'src');
  if (!existsSync(src)) {
    if (given.length > 0) problems.push(`${relative(root, dir)} has no src/`);
    continue;
  }
  const graph = new Map(sourceFiles(src).map((file) => [file, importsOf(file)]));
  for (const component of cycles(graph)) {
    problems.push(`import cycle: ${component.map((file) => relative(root, file)).join(' ⇄ ')}`);
  }
}
for (const problem of problems) console.error(problem);
if (problems.length > 0) process.exitCode = 1;
