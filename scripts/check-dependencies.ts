/**
 * CI check: every runtime dependency a workspace package declares (`dependencies`,
 * `peerDependencies`) is imported by its `src/`, and everything its `src/` imports is declared. A
 * declared dependency nothing uses is dead weight for every installer and a false statement about the
 * stack. Prints one line per problem and exits 1 if there is any.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join, relative } from 'node:path';

const root = join(import.meta.dirname, '..');
// Static and dynamic imports, side-effect imports, and `import.meta.resolve` (a package run as a process).
const importPattern =
  /(?:^|[\s;])(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|(?:import|resolve)\(\s*['"]([^'"]+)['"]\s*\)|^import\s+['"]([^'"]+)['"]/gmu;

interface Manifest {
  readonly name: string;
  readonly dependencies?: Record<string, string>;
  readonly peerDependencies?: Record<string, string>;
  readonly devDependencies?: Record<string, string>;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.[cm]?tsx?$/u.test(entry.name))
    .map((entry) => join(entry.parentPath, entry.name));
}

/** `@scope/name` or `name` of a bare specifier; `undefined` for relative paths and Node built-ins. */
function packageOf(specifier: string): string | undefined {
  if (specifier.startsWith('.') || specifier.startsWith('/') || specifier.startsWith('node:'))
    return undefined;
  const parts = specifier.split('/');
  const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? specifier);
  return builtinModules.includes(name) ? undefined : name;
}

const problems: string[] = [];
for (const group of ['packages', 'examples']) {
  for (const entry of readdirSync(join(root, group), { withFileTypes: true })) {
    const dir = join(root, group, entry.name);
    let manifest: Manifest;
    try {
      manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest;
    } catch {
      continue;
    }
    const imported = new Set<string>();
    for (const file of sourceFiles(join(dir, 'src'))) {
      for (const match of readFileSync(file, 'utf8').matchAll(importPattern)) {
        const name = packageOf(match[1] ?? match[2] ?? match[3] ?? '');
        if (name !== undefined) imported.add(name);
      }
    }
    const declared = new Set([
      ...Object.keys(manifest.dependencies ?? {}),
      ...Object.keys(manifest.peerDependencies ?? {}),
    ]);
    const where = relative(root, dir);
    for (const name of declared) {
      if (!imported.has(name)) problems.push(`${where}: declares ${name}, but nothing in src/ imports it`);
    }
    // A private package's src/ may run on its devDependencies (the demo runs on testenv).
    const available = new Set([...declared, ...Object.keys(manifest.devDependencies ?? {})]);
    for (const name of imported) {
      if (!available.has(name) && name !== manifest.name) {
        problems.push(`${where}: src/ imports ${name}, but package.json does not declare it`);
      }
    }
  }
}
for (const problem of problems) console.error(problem);
if (problems.length > 0) process.exitCode = 1;
else
  console.log('check-dependencies: every declared runtime dependency is imported, and every import declared');
