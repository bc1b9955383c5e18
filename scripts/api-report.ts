/**
 * The API report: every published entry point's exports with their signatures, one file per package
 * (`packages/<name>/api-report.md`), so that a change to the public surface shows up in review.
 *
 * `node scripts/api-report.ts` writes the reports (`npm run api-report`); with `--check` (in
 * `npm run lint`) it writes nothing and fails when a committed report differs from the code.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import {
  type EntryPoint,
  entryPoints,
  exportsOf,
  program,
  publishedPackages,
  root,
} from './public-entries.ts';

const checker = program.getTypeChecker();
const format =
  ts.TypeFormatFlags.NoTruncation |
  ts.TypeFormatFlags.UseAliasDefinedOutsideCurrentScope |
  ts.TypeFormatFlags.WriteArrowStyleSignature;

const typeText = (type: ts.Type): string => checker.typeToString(type, undefined, format);

/** Declared in this repository's packages, not inherited from Node.js or a dependency. */
const ours = (symbol: ts.Symbol): boolean =>
  (symbol.declarations ?? []).some((d) => {
    const file = d.getSourceFile().fileName;
    return file.startsWith(join(root, 'packages')) && !file.includes('node_modules');
  });

function isPublicMember(symbol: ts.Symbol): boolean {
  if (symbol.name.startsWith('#') || symbol.name.startsWith('__') || !ours(symbol)) return false;
  return !(symbol.declarations ?? []).some(
    (d) =>
      ts.canHaveModifiers(d) &&
      (ts.getModifiers(d) ?? []).some(
        (m) => m.kind === ts.SyntaxKind.PrivateKeyword || m.kind === ts.SyntaxKind.ProtectedKeyword,
      ),
  );
}

function members(type: ts.Type, indent: string): string[] {
  return type
    .getProperties()
    .filter(isPublicMember)
    .map((member) => {
      const declaration = member.valueDeclaration ?? member.declarations?.[0];
      const memberType =
        declaration === undefined
          ? checker.getDeclaredTypeOfSymbol(member)
          : checker.getTypeOfSymbolAtLocation(member, declaration);
      const optional = member.flags & ts.SymbolFlags.Optional ? '?' : '';
      const readonly =
        declaration !== undefined && ts.getCombinedModifierFlags(declaration) & ts.ModifierFlags.Readonly
          ? 'readonly '
          : '';
      return `${indent}${readonly}${member.name}${optional}: ${typeText(memberType)};`;
    });
}

/** One export as declaration-like text. */
function describe(exported: ts.Symbol): string {
  const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
  const name = exported.name;
  const declaration = symbol.valueDeclaration ?? symbol.declarations?.[0];
  if (symbol.flags & ts.SymbolFlags.Class && declaration !== undefined) {
    const staticType = checker.getTypeOfSymbolAtLocation(symbol, declaration);
    const constructors = staticType
      .getConstructSignatures()
      .map(
        (signature) =>
          `  constructor${checker.signatureToString(signature, undefined, format).replace(/ => .*$/u, '')};`,
      );
    const statics = members(staticType, '  static ').filter((line) => !line.includes(' prototype:'));
    return [
      `class ${name} {`,
      ...constructors,
      ...statics,
      ...members(checker.getDeclaredTypeOfSymbol(symbol), '  '),
      '}',
    ].join('\n');
  }
  if (symbol.flags & ts.SymbolFlags.Function && declaration !== undefined) {
    const type = checker.getTypeOfSymbolAtLocation(symbol, declaration);
    return type
      .getCallSignatures()
      .map(
        (signature) =>
          `function ${name}${checker.signatureToString(signature, undefined, format).replace(/ => /u, ': ')};`,
      )
      .join('\n');
  }
  if (symbol.flags & ts.SymbolFlags.Interface) {
    return [`interface ${name} {`, ...members(checker.getDeclaredTypeOfSymbol(symbol), '  '), '}'].join('\n');
  }
  if (symbol.flags & ts.SymbolFlags.TypeAlias) {
    const type = checker.getDeclaredTypeOfSymbol(symbol);
    return `type ${name} = ${checker.typeToString(type, undefined, format | ts.TypeFormatFlags.InTypeAlias)};`;
  }
  if (symbol.flags & ts.SymbolFlags.Variable && declaration !== undefined) {
    return `const ${name}: ${typeText(checker.getTypeOfSymbolAtLocation(symbol, declaration))};`;
  }
  return `/* ${name}: unrecognised export */`;
}

function entrySection(entry: EntryPoint): string {
  const specifier = `@kube-provisioner/${entry.packageName}${entry.subpath === '.' ? '' : entry.subpath.slice(1)}`;
  const exported = exportsOf(entry).sort((a, b) => a.name.localeCompare(b.name));
  const body = exported.map(describe).join('\n\n');
  return `## \`${specifier}\` (${exported.length} names, ${entry.stability})\n\n\`\`\`ts\n${body}\n\`\`\`\n`;
}

function report(packageName: string): string {
  const sections = entryPoints.filter((entry) => entry.packageName === packageName).map(entrySection);
  return [
    `# API report: \`@kube-provisioner/${packageName}\``,
    '',
    'Every published entry point, its stability (stated in its top doc comment) and what it exports, generated from',
    'the sources by `npm run api-report`; `npm run lint` fails when this file differs from the code. Review changes',
    'here as changes to the public API.',
    '',
    ...sections,
  ].join('\n');
}

const check = process.argv.includes('--check');
const stale: string[] = [];
for (const packageName of publishedPackages) {
  const file = join(root, 'packages', packageName, 'api-report.md');
  const text = report(packageName);
  let committed: string | undefined;
  try {
    committed = readFileSync(file, 'utf8');
  } catch {
    committed = undefined;
  }
  if (committed === text) continue;
  if (check) stale.push(file);
  else writeFileSync(file, text);
}
if (stale.length > 0) {
  console.error(
    `api-report: the public API changed; run \`npm run api-report\` and review the difference in:\n  ${stale.join('\n  ')}`,
  );
  process.exitCode = 1;
} else if (check) {
  console.log('api-report: every committed report matches the code');
}
