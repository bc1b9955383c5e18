/**
 * CI check: every type a published entry point's exports refer to (in a signature, property, base
 * type…) is itself exported by some entry point, so users can name what the API hands them. Reads the
 * sources through each package's `exports` map; prints each unexported type with a user of it and
 * exits 1 if there is any.
 */
import { join, relative } from 'node:path';
import ts from 'typescript';
import { entryPoints, exportsOf, program, root } from './public-entries.ts';

const checker = program.getTypeChecker();
const resolveAlias = (symbol: ts.Symbol): ts.Symbol =>
  symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
const ours = (symbol: ts.Symbol): boolean =>
  (symbol.declarations ?? []).some((d) => {
    const file = d.getSourceFile().fileName;
    return file.startsWith(join(root, 'packages')) && !file.includes('node_modules');
  });

const exported = new Set<ts.Symbol>();
for (const entry of entryPoints) for (const symbol of exportsOf(entry)) exported.add(resolveAlias(symbol));

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
