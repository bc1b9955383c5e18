// Runs the README's lifecycle events example exactly as written and checks what it prints: the
// `synced` and `provisioned` listeners fire, with the claim and the PV of the fixture.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it, vi } from 'vitest';
import { readmeExample } from './support/readme-blocks.ts';

afterEach(() => {
  vi.restoreAllMocks();
});

it('the README lifecycle events example prints synced and provisioned', async () => {
  const name = 'lifecycle-events.ts';
  // Inside the package, so `@kube-provisioner/controller` resolves to this workspace package.
  const dir = join(import.meta.dirname, '../.vitest/readme-example');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, name);
  writeFileSync(file, readmeExample(name));
  const printed: unknown[] = [];
  vi.spyOn(console, 'log').mockImplementation((line: unknown) => void printed.push(line));
  const warned: unknown[] = [];
  vi.spyOn(console, 'warn').mockImplementation((line: unknown) => void warned.push(line));

  await import(file);

  expect(printed).toEqual([
    'caches synced',
    expect.stringMatching(/^provisioned pvc-[\w-]+ for data in \d+(\.\d+)? ms$/u),
  ]);
  expect(warned).toEqual([]);
});
