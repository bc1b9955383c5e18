import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { imageNodeFlags } from '../src/ours-program.ts';

const repository = join(import.meta.dirname, '..', '..', '..');

describe('ours as its image runs it', () => {
  it.each(['packages/hostpath/Dockerfile', 'examples/nfs/Dockerfile'])(
    'uses the Node.js flags of %s',
    async (dockerfile) => {
      const text = await readFile(join(repository, dockerfile), 'utf8');
      expect(/^ENV NODE_OPTIONS="?([^"\n]*)"?$/m.exec(text)?.[1]).toBe(imageNodeFlags.join(' '));
    },
  );
});
