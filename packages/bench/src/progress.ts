/**
 * Progress display on stderr: one line rewritten in place on a terminal, and a line per tenth of the
 * work otherwise (CI logs), so a long phase never looks hung.
 */

/** Formats one progress line, e.g. `burst: PVs 250/1000 (25%) 3.1 s`. */
export function formatProgress(label: string, done: number, total: number, elapsedMs: number): string {
  const percent = total === 0 ? 100 : Math.floor((done / total) * 100);
  return `${label} ${done}/${total} (${percent}%) ${(elapsedMs / 1000).toFixed(1)} s`;
}

/** Reports the progress of one phase. */
export interface ProgressBar {
  /** Records that `done` of the phase's items are finished. */
  update(done: number): void;
  /** Ends the phase's line. */
  done(): void;
}

/** Where progress goes, and how often it may be redrawn. */
export interface ProgressSink {
  readonly write: (text: string) => void;
  readonly isTty: boolean;
  readonly now: () => number;
}

const redrawIntervalMs = 100;

const stderrSink: ProgressSink = {
  write: (text) => process.stderr.write(text),
  isTty: process.stderr.isTTY === true,
  now: () => performance.now(),
};

/** Starts a progress line for a phase of `total` items. */
export function startProgress(label: string, total: number, sink: ProgressSink = stderrSink): ProgressBar {
  const started = sink.now();
  let lastDrawn = -Infinity;
  let lastTenth = -1;
  let current = 0;
  const line = (): string => formatProgress(label, current, total, sink.now() - started);
  return {
    update(done) {
      current = done;
      if (sink.isTty) {
        if (sink.now() - lastDrawn < redrawIntervalMs && done < total) return;
        lastDrawn = sink.now();
        sink.write(`\r\x1b[K${line()}`);
        return;
      }
      const tenth = total === 0 ? 10 : Math.floor((done / total) * 10);
      if (tenth > lastTenth) {
        lastTenth = tenth;
        sink.write(`${line()}\n`);
      }
    },
    done() {
      if (sink.isTty) sink.write(`\r\x1b[K${line()}\n`);
      else if (lastTenth < 10) sink.write(`${line()}\n`);
    },
  };
}
