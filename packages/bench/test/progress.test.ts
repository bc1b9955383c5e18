import { describe, expect, it } from 'vitest';
import { formatProgress, type ProgressSink, startProgress } from '../src/progress.ts';

function sink(isTty: boolean): ProgressSink & { output: string[]; advance(ms: number): void } {
  let now = 0;
  const output: string[] = [];
  return {
    output,
    isTty,
    write: (text) => output.push(text),
    now: () => now,
    advance: (ms) => {
      now += ms;
    },
  };
}

describe('formatProgress', () => {
  it('shows done, total, percentage and elapsed seconds', () => {
    expect(formatProgress('burst: PVs', 250, 1000, 3140)).toBe('burst: PVs 250/1000 (25%) 3.1 s');
  });
});

describe('startProgress', () => {
  it('writes a line per tenth of the work when stderr is not a terminal', () => {
    const out = sink(false);
    const bar = startProgress('x', 100, out);
    for (let done = 0; done <= 100; done++) bar.update(done);
    bar.done();
    expect(out.output).toHaveLength(11);
    expect(out.output[10]).toBe('x 100/100 (100%) 0.0 s\n');
  });

  it('redraws one line in place on a terminal, at most every 100 ms', () => {
    const out = sink(true);
    const bar = startProgress('x', 10, out);
    bar.update(1);
    bar.update(2);
    out.advance(100);
    bar.update(3);
    bar.done();
    expect(out.output).toEqual([
      '\r\x1b[Kx 1/10 (10%) 0.0 s',
      '\r\x1b[Kx 3/10 (30%) 0.1 s',
      '\r\x1b[Kx 3/10 (30%) 0.1 s\n',
    ]);
  });
});
