import { describe, expect, it } from 'vitest';
import { BoundedTasks } from '../src/bounded-tasks.ts';

/** A task that runs until `finish` is called. */
function held(): { task: () => Promise<void>; finish: (error?: Error) => void; started: () => boolean } {
  let started = false;
  let finish: (error?: Error) => void = () => undefined;
  const done = new Promise<void>((resolve, reject) => {
    finish = (error) => (error === undefined ? resolve() : reject(error));
  });
  return {
    task: () => {
      started = true;
      return done;
    },
    finish: (error) => finish(error),
    started: () => started,
  };
}

describe('BoundedTasks', () => {
  it('runs at most its limit at once, starting the next as one ends', async () => {
    const pool = new BoundedTasks(2);
    const group = pool.group();
    const [first, second, third] = [held(), held(), held()];
    await group.start(first.task);
    await group.start(second.task);
    const starting = group.start(third.task);

    expect([first.started(), second.started(), third.started()]).toEqual([true, true, false]);
    first.finish();
    await starting;
    expect(third.started()).toBe(true);
    second.finish();
    third.finish();
    await group.settled();
  });

  it('refuses every start after a failure, and settles a group only once its tasks ended', async () => {
    const pool = new BoundedTasks(2);
    const group = pool.group();
    const [failing, slow] = [held(), held()];
    await group.start(failing.task);
    await group.start(slow.task);
    const waiting = group.start(async () => undefined);
    let settled = false;
    const settling = group.settled().then(() => {
      settled = true;
    });

    failing.finish(new Error('disk gone'));
    await expect(waiting).rejects.toThrow('disk gone');
    expect(() => pool.throwIfFailed()).toThrow('disk gone');
    expect(settled).toBe(false);
    slow.finish();
    await settling;
    await expect(pool.group().start(async () => undefined)).rejects.toThrow('disk gone');
  });
});
