import { InfeasibleError } from '@kube-provisioner/controller';
import type { CloneProgress } from '@kube-provisioner/controller/clone';
import { describe, expect, it } from 'vitest';
import { copyWithinLimit, type LimitedCopyOptions } from '../src/copy-limit.ts';

const limit = { projectId: 7, hardBytes: 100 };
const progress = (bytes: number): CloneProgress => ({ entries: 1000, bytes, skipped: 0 });

/** Usage readings answering `answers` in turn (a function throws instead), counting the calls. */
function readings(...answers: Array<number | (() => never)>) {
  const calls: AbortSignal[] = [];
  const read = async (signal: AbortSignal): Promise<number> => {
    const answer = answers[calls.push(signal) - 1];
    if (answer === undefined) throw new Error('no reading expected');
    return typeof answer === 'number' ? answer : answer();
  };
  return { read, calls };
}

/** A copy reporting `reports`, then ending with the last, or, when `waits`, running until stopped. */
function fakeCopy(reports: number[], waits = false) {
  const seen: CloneProgress[] = [];
  const copy = async ({ signal, onProgress }: LimitedCopyOptions): Promise<CloneProgress> => {
    for (const bytes of reports) onProgress(progress(bytes));
    if (waits) {
      // As safe-fs's copy, which looks at its signal between chunks.
      signal.throwIfAborted();
      await new Promise((_resolve, reject) => {
        signal.addEventListener('abort', () => reject(signal.reason), { once: true });
      });
    }
    return progress(reports.at(-1) ?? 0);
  };
  const options = { signal: new AbortController().signal, onProgress: (p: CloneProgress) => seen.push(p) };
  return { copy, options, seen };
}

describe('a clone copy held to its project limit whatever the kernel lets through', () => {
  it('stops the copy in the chunk whose bytes pass the limit, without waiting for the accounting', async () => {
    const { copy, options, seen } = fakeCopy([60, 160], true);
    const usage = readings();

    const copied = copyWithinLimit(copy, limit, usage.read, options);

    await expect(copied).rejects.toThrow(InfeasibleError);
    await expect(copied).rejects.toThrow("does not fit the new volume's limit of 100 bytes");
    expect(usage.calls).toEqual([]);
    expect(seen.map((p) => p.bytes)).toEqual([60, 160]);
  });

  it('refuses a copy that ends above the limit though the bytes it wrote never passed it', async () => {
    // Many small files: the accounting counts whole blocks and the directories too.
    const { copy, options } = fakeCopy([40, 90]);
    const usage = readings(120);

    await expect(copyWithinLimit(copy, limit, usage.read, options)).rejects.toThrow(
      "does not fit the new volume's limit of 100 bytes",
    );
    expect(usage.calls).toEqual([options.signal]);
  });

  it('lets a copy within the limit finish when the accounting agrees', async () => {
    const { copy, options } = fakeCopy([40, 100]);
    const usage = readings(100);

    await expect(copyWithinLimit(copy, limit, usage.read, options)).resolves.toEqual(progress(100));
  });

  it('fails with the reading error when the usage after the copy cannot be read', async () => {
    const { copy, options } = fakeCopy([10]);
    const usage = readings(() => {
      throw new Error('xfs_quota report failed');
    });

    await expect(copyWithinLimit(copy, limit, usage.read, options)).rejects.toThrow(
      'xfs_quota report failed',
    );
  });

  it("keeps the reason of the caller's own cancellation", async () => {
    const { copy } = fakeCopy([10], true);
    const cancel = new AbortController();
    const cancelled = new Error('claim deleted');
    const usage = readings();

    const copied = copyWithinLimit(copy, limit, usage.read, { signal: cancel.signal, onProgress: () => {} });
    cancel.abort(cancelled);

    await expect(copied).rejects.toBe(cancelled);
    expect(usage.calls).toEqual([]);
  });
});
