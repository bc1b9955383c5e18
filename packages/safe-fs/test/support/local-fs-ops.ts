// Setup of the `safe-fs:local-ops` project: the whole suite once more with the default calls made on
// the event loop's thread (`localFsOps`, what hostpath uses on a local disk) instead of the thread
// pool, so both tables pass the same containment, race and crash tests.
import { vi } from 'vitest';

vi.mock('../../src/fs-ops.ts', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../src/fs-ops.ts')>();
  return { ...actual, nodeFsOps: actual.localFsOps };
});

const { localFsOps, nodeFsOps } = await import('../../src/fs-ops.ts');
if (nodeFsOps !== localFsOps) throw new Error('safe-fs:local-ops: the fs-ops mock is not in effect');
