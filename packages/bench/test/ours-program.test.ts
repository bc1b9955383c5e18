import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { imageNodeFlags } from '../src/ours-program.ts';

const repository = join(import.meta.dirname, '..', '..', '..');

describe('ours as its image runs it', () => {
  it.each(['packages/hostpath/Dockerfile', 'examples/nfs/Dockerfile'])(
    "uses the Node.js flags (NODE_OPTIONS and the entrypoint's) of %s",
    async (dockerfile) => {
      const text = await readFile(join(repository, dockerfile), 'utf8');
      const environment = /^ENV NODE_OPTIONS=(.*)$/m.exec(text)?.[1]?.split(' ') ?? [];
      const entrypoint = JSON.parse(/^ENTRYPOINT (.*)$/m.exec(text)?.[1] ?? '[]') as string[];
      // `node`, its flags, the bundle.
      expect([...environment, ...entrypoint.slice(1, -1)]).toEqual(imageNodeFlags);
    },
  );
});
