/** Prints numbered steps with the time each took and the time since the start. */
export interface Narrative {
  /** Starts a step; its result line follows when the returned promise settles. */
  step<T>(title: string, work: () => Promise<T>): Promise<T>;
  /** An indented detail line under the current step. */
  detail(text: string): void;
  /** Elapsed time since the narrative began, formatted. */
  elapsed(): string;
}

/** Formats milliseconds: `850ms`, `12.3s`. */
export function formatMs(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)}ms` : `${(ms / 1000).toFixed(1)}s`;
}

/** A narrative writing lines to `print`, timed with `now` (injectable for tests). */
export function createNarrative(print: (line: string) => void, now: () => number = Date.now): Narrative {
  const started = now();
  let count = 0;
  return {
    async step(title, work) {
      count += 1;
      print(`\n${count}. ${title}`);
      const begun = now();
      try {
        const result = await work();
        print(`   done in ${formatMs(now() - begun)} (at ${formatMs(now() - started)})`);
        return result;
      } catch (err) {
        print(`   FAILED after ${formatMs(now() - begun)}: ${(err as Error).message}`);
        throw err;
      }
    },
    detail(text) {
      for (const line of text.split('\n')) print(`   ${line}`);
    },
    elapsed: () => formatMs(now() - started),
  };
}
