import { describe, expect, it } from 'vitest';
import { Fifo } from '../src/workqueue/fifo.ts';

describe('Fifo', () => {
  it('hands items out in the order they came, across the compaction of its taken prefix', () => {
    const fifo = new Fifo<number>();
    const taken: number[] = [];
    let next = 0;
    // Interleaved pushes and takes, so the taken prefix is dropped several times with items behind it.
    for (let round = 0; round < 50; round++) {
      for (let i = 0; i < 100; i++) fifo.push(next++);
      for (let i = 0; i < 60; i++) taken.push(fifo.shift() ?? -1);
    }
    expect(fifo.size).toBe(next - taken.length);
    for (let item = fifo.shift(); item !== undefined; item = fifo.shift()) taken.push(item);

    expect(taken).toEqual(Array.from({ length: next }, (_, index) => index));
    expect(fifo.size).toBe(0);
    expect(fifo.shift()).toBeUndefined();
  });

  it('starts over cleanly once emptied', () => {
    const fifo = new Fifo<string>();
    fifo.push('a');
    expect(fifo.shift()).toBe('a');
    fifo.push('b');
    fifo.push('c');
    expect([fifo.shift(), fifo.shift(), fifo.shift()]).toEqual(['b', 'c', undefined]);
  });
});
