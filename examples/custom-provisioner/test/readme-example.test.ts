import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '../../..');

describe('the README example', () => {
  it('is exactly src/readme-example.ts, which the end-to-end outage test runs', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const block = /## Write a provisioner\n\n```ts\n([\s\S]*?)```/u.exec(readme)?.[1];
    const file = readFileSync(join(import.meta.dirname, '../src/readme-example.ts'), 'utf8');
    expect(block).toBe(file);
  });
});
