// Runs the README's copyable test file exactly as written (extracted at collection time, so the
// README and this test cannot drift): its describe/it blocks register in this file.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readmeTestFile } from './support/readme-blocks.ts';

const { name, source } = readmeTestFile();
// Inside the package, so `@kube-provisioner/controller` resolves to this workspace package.
const dir = join(import.meta.dirname, '../.vitest/readme-example');
mkdirSync(dir, { recursive: true });
const file = join(dir, name);
writeFileSync(file, source);
await import(file);
