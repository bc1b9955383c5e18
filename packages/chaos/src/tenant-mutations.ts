/**
 * A hostile tenant's workload: it changes its own volumes as fast as it can while the provisioner
 * walks, copies and removes them. Each step truncates a large file to nothing and writes it again,
 * widens a directory, deepens a chain of directories, swaps two directories by rename, or rewrites
 * a file: the changes that once wedged a copy (a file shrunk under it) or grew a walk's memory (a
 * wide directory).
 */
import { mkdir, open, rename, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { SeededRandom } from './seeded-random.ts';

/** How much a tenant's volume holds before the attack, and how far it may grow. */
export interface TenantTreeLimits {
  /** Size of `big.bin`, the file truncated and written again. */
  readonly bigFileBytes: number;
  /** Files `wide/` may reach. */
  readonly maxWideFiles: number;
  /** Levels `deep/` may reach. */
  readonly maxDepth: number;
}

/** What a {@link TenantMutations} did. */
export interface MutationCounts {
  readonly steps: number;
  /** Steps that failed (the provisioner may hold or move an entry for a moment): counted, not fatal. */
  readonly failures: number;
}

/** Mutations running over some volumes until stopped. */
export interface TenantMutations {
  stop(): Promise<MutationCounts>;
}

const wideBatch = 100;

/** Prepares `dir` as the tenant's volume: `big.bin`, `wide/`, `deep/`, and the two swapped directories. */
export async function prepareTenantTree(dir: string, limits: TenantTreeLimits): Promise<void> {
  await writeFile(join(dir, 'big.bin'), Buffer.alloc(limits.bigFileBytes, 1));
  for (const name of ['wide', 'deep', 'swap-a', 'swap-b']) await mkdir(join(dir, name), { recursive: true });
  await writeFile(join(dir, 'swap-a', 'which'), 'a');
  await writeFile(join(dir, 'swap-b', 'which'), 'b');
}

/** Starts changing every directory of `dirs`, one step at a time, chosen by `random`. */
export function startTenantMutations(
  dirs: readonly string[],
  limits: TenantTreeLimits,
  random: SeededRandom,
): TenantMutations {
  const wide = new Map<string, number>();
  const depth = new Map<string, number>();
  let steps = 0;
  let failures = 0;
  let stopped = false;

  const step = async (dir: string): Promise<void> => {
    const action = random.integer(0, 4);
    if (action === 0) {
      // Shrunk under a copy, then grown again, so the next copy meets it too.
      await truncate(join(dir, 'big.bin'), 0);
      const file = await open(join(dir, 'big.bin'), 'r+');
      try {
        await file.write(Buffer.alloc(limits.bigFileBytes, 2), 0, limits.bigFileBytes, 0);
      } finally {
        await file.close();
      }
    } else if (action === 1) {
      const count = wide.get(dir) ?? 0;
      if (count >= limits.maxWideFiles) return;
      for (let i = count; i < count + wideBatch; i++) await writeFile(join(dir, 'wide', `w${i}`), '');
      wide.set(dir, count + wideBatch);
    } else if (action === 2) {
      const levels = depth.get(dir) ?? 0;
      if (levels >= limits.maxDepth) return;
      await mkdir(join(dir, 'deep', ...Array.from({ length: levels + 1 }, () => 'd')));
      depth.set(dir, levels + 1);
    } else if (action === 3) {
      await rename(join(dir, 'swap-a'), join(dir, 'swap-tmp'));
      await rename(join(dir, 'swap-b'), join(dir, 'swap-a'));
      await rename(join(dir, 'swap-tmp'), join(dir, 'swap-b'));
    } else {
      await writeFile(join(dir, 'swap-a', 'which'), String(steps));
    }
  };

  const loop = (async () => {
    while (!stopped) {
      const dir = dirs[random.integer(0, dirs.length - 1)];
      if (dir === undefined) return;
      await step(dir).catch(() => {
        failures++;
      });
      steps++;
    }
  })();

  return {
    async stop() {
      stopped = true;
      await loop;
      return { steps, failures };
    },
  };
}
