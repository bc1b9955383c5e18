/**
 * CI check: every type a published entry point's exports refer to (in a signature, property, base
 * type…) is itself exported by some entry point, so users can name what the API hands them. Reads the
 * sources through each package's `exports` map; prints each unexported type with a user of it and
 * exits 1 if there is any.
 */
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

const root = join(import.meta.dirname, '..');
const published = ['controller', 'safe-fs', 'hostpath', 'nfs-subdir', 'nfs-client', 'testenv', 'audit'];
const sourceCondition = '@kube-provisioner/source';

const entries = published.flatMap((name) => {
  const dir = join(root, 'packages', name);
  const { exports } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
    exports: Record<string, Record<string, string>>;
  };
  return Object.values(exports).map((conditions) => join(dir, conditions[sourceCondition] ?? ''));
});

const program = ts.createProgram(entries, {
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  customConditions: [sourceCondition],
  allowImportingTsExtensions: true,
  noEmit: true,
  types: ['node'],
});
const checker = program.getTypeChecker();
const resolveAlias = (symbol: ts.Symbol): ts.Symbol =>
  symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
const ours = (symbol: ts.Symbol): boolean =>
  (symbol.declarations ?? []).some((d) => {
    const file = d.getSourceFile().fileName;
    return file.startsWith(join(root, 'packages')) && !file.includes('node_modules');
  });

const exported = new Set<ts.Symbol>();
for (const entry of entries) {
  const file = program.getSourceFile(entry);
  const module = file === undefined ? undefined : checker.getSymbolAtLocation(file);
  if (module === undefined) throw new Error(`cannot read entry point ${entry}`);
  for (const symbol of checker.getExportsOfModule(module)) exported.add(resolveAlias(symbol));
}

function isPrivateMember(node: ts.Node): boolean {
  if (!ts.isClassElement(node)) return false;
  if (node.name !== undefined && ts.isPrivateIdentifier(node.name)) return true;
  return (
    ts.canHaveModifiers(node) &&
    (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.PrivateKeyword)
  );
}

const visited = new Set<ts.Symbol>();
const missing = new Map<string, string>();
function visit(symbol: ts.Symbol): void {
  if (visited.has(symbol)) return;
  visited.add(symbol);
  for (const declaration of symbol.declarations ?? []) {
    declaration.forEachChild(function walk(node: ts.Node): void {
      // Bodies and private members are not part of the API.
      if (ts.isBlock(node) || isPrivateMember(node)) return;
      const name = ts.isTypeReferenceNode(node)
        ? node.typeName
        : ts.isExpressionWithTypeArguments(node)
          ? node.expression
          : undefined;
      const found = name === undefined ? undefined : checker.getSymbolAtLocation(name);
      if (found !== undefined) {
        const target = resolveAlias(found);
        if (!(target.flags & ts.SymbolFlags.TypeParameter) && ours(target)) {
          if (!exported.has(target)) {
            const where = relative(root, target.declarations?.[0]?.getSourceFile().fileName ?? '');
            missing.set(`${target.name} (${where})`, symbol.name);
          }
          visit(target);
        }
      }
      node.forEachChild(walk);
    });
  }
}
for (const symbol of exported) visit(symbol);

for (const [type, user] of missing) console.error(`not exported: ${type}, used by ${user}`);
if (missing.size > 0) process.exitCode = 1;
else console.log('check-public-types: every type the public API refers to is exported');
