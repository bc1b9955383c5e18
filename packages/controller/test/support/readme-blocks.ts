/** Code blocks of the READMEs, so tests run exactly what a reader copies. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const repoRoot = join(import.meta.dirname, '../../../..');

/** The controller README's test file marked `<!-- readme-test: <name> -->`, with its name. */
export function readmeTestFile(): { name: string; source: string } {
  const readme = readFileSync(join(repoRoot, 'packages/controller/README.md'), 'utf8');
  const match = /<!-- readme-test: (?<name>[\w.-]+) -->\s*```ts\n(?<source>[\s\S]*?)```/u.exec(readme);
  if (match?.groups?.name === undefined || match.groups.source === undefined) {
    throw new Error('packages/controller/README.md has no <!-- readme-test: … --> block');
  }
  return { name: match.groups.name, source: match.groups.source };
}

/** The controller README's `ts` block marked `<!-- readme-example: <name> -->`. */
export function readmeExample(name: string): string {
  const readme = readFileSync(join(repoRoot, 'packages/controller/README.md'), 'utf8');
  const marker = `<!-- readme-example: ${name} -->`;
  const start = readme.indexOf(marker);
  const match = /```ts\n(?<source>[\s\S]*?)```/u.exec(readme.slice(start));
  if (start < 0 || match?.groups?.source === undefined) {
    throw new Error(`packages/controller/README.md has no ${marker} block`);
  }
  return match.groups.source;
}

/** The first `ts` block under the root README's "Write a provisioner" heading. */
export function writeAProvisionerExample(): string {
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
  const match = /## Write a provisioner\s*```ts\n(?<source>[\s\S]*?)```/u.exec(readme);
  if (match?.groups?.source === undefined) throw new Error('README.md has no "Write a provisioner" example');
  return match.groups.source;
}
