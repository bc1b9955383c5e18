/**
 * A hostile tenant for the snapshot tests: it plants a tree full of links out of the root, then keeps
 * changing it, one synchronous step at a time (called between the copy's writes, or in a loop by
 * `hostile-tenant-process.ts`). Every step may fail against the copy's own work; that is ignored.
 */
import {
  lstatSync,
  mkdirSync,
  readdirSync,
  renameSync,
  rmSync,
  symlinkSync,
  truncateSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';

/** What the sentinel outside the root holds: no copy may ever contain it. */
export const secretText = 'secret outside the root';

const bigBytes = 2 * 1024 * 1024 + 17;
const wideLimit = 200;
const deepLimit = 80;

/** Makes `outside` with the sentinel: a secret file and a directory holding another. */
export function plantSentinel(outside: string): void {
  mkdirSync(join(outside, 'inner'), { recursive: true });
  writeFileSync(join(outside, 'secret'), secretText);
  writeFileSync(join(outside, 'inner', 'secret'), secretText);
}

/** Fills the tenant's directory `dir`: wide and deep directories, a big file, links to `outside`. */
export function plantTree(dir: string, outside: string): void {
  mkdirSync(join(dir, 'wide'));
  for (let index = 0; index < 50; index++) writeFileSync(join(dir, 'wide', `w${index}`), `wide ${index}`);
  mkdirSync(join(dir, 'sub'));
  writeFileSync(join(dir, 'sub', 'kept'), 'kept');
  mkdirSync(join(dir, 'deep', 'd'), { recursive: true });
  writeFileSync(join(dir, 'big'), Buffer.alloc(bigBytes, 7));
  for (let index = 0; index < 10; index++) writeFileSync(join(dir, `f${index}`), `file ${index}`);
  symlinkSync(join(outside, 'secret'), join(dir, 'escape'));
  symlinkSync(outside, join(dir, 'escape-dir'));
}

function ignoringFailure(action: () => void): void {
  try {
    action();
  } catch {
    // The copy, or an earlier step, changed what this step expected: the tenant just goes on.
  }
}

/**
 * One change to `dir`, by `round`: widens `wide`, swaps `sub` for a link to `outside` (and back),
 * swaps a file for a link to the secret, truncates or regrows `big`, or deepens `deep`.
 */
export function tenantStep(dir: string, outside: string, round: number): void {
  switch (round % 4) {
    case 0:
      ignoringFailure(() => {
        if (readdirSync(join(dir, 'wide')).length >= wideLimit) return;
        for (let index = 0; index < 5; index++) writeFileSync(join(dir, 'wide', `n${round}-${index}`), 'new');
      });
      return;
    case 1:
      ignoringFailure(() => {
        const sub = join(dir, 'sub');
        if (lstatSync(sub).isDirectory()) {
          renameSync(sub, join(dir, `sub-${round}`));
          symlinkSync(outside, sub);
        } else {
          unlinkSync(sub);
          mkdirSync(sub);
          writeFileSync(join(sub, 'kept'), 'kept');
        }
      });
      ignoringFailure(() => {
        const file = join(dir, `f${round % 10}`);
        rmSync(file, { force: true });
        symlinkSync(join(outside, 'secret'), file);
      });
      return;
    case 2:
      ignoringFailure(() => {
        const big = join(dir, 'big');
        if (lstatSync(big).size > 0) truncateSync(big, 0);
        else writeFileSync(big, Buffer.alloc(bigBytes, round % 256));
      });
      return;
    default: {
      const levels = Math.min(deepLimit, 1 + Math.floor(round / 4));
      ignoringFailure(() => {
        const bottom = join(dir, 'deep', ...Array.from({ length: levels }, () => 'd'));
        mkdirSync(bottom, { recursive: true });
        writeFileSync(join(bottom, `bottom${round}`), 'bottom');
      });
    }
  }
}
