/**
 * A few tasks at once, for a clone's copy: each system call is a trip through libuv's thread pool, so
 * files copied one after another leave the pool and the disk idle. {@link BoundedTasks.start} waits
 * for a free slot before starting a task (the walk never runs ahead of the copies, so open
 * descriptors stay bounded), the first failure stops every later start, and {@link TaskGroup.settled}
 * lets the owner of a descriptor wait for every task using it before closing it: a descriptor closed
 * early could be reused by another open, and a late `/proc/self/fd/<fd>/<name>` would then name a
 * different directory.
 */

/** Tasks started together, awaited together (a directory's entries). */
export interface TaskGroup {
  /** Waits for a free slot, then starts `task`; throws instead when a task of the pool has failed. */
  start(task: () => Promise<void>): Promise<void>;
  /** Resolves once every task of the group has finished, failed or not; never rejects. */
  settled(): Promise<void>;
}

/** At most `limit` tasks running, failing fast. */
export class BoundedTasks {
  readonly #limit: number;
  #running = 0;
  /** Starts waiting for a slot, first come first served. */
  readonly #waiting: (() => void)[] = [];
  #failure: { readonly error: unknown } | undefined;

  constructor(limit: number) {
    if (!(Number.isInteger(limit) && limit >= 1)) throw new RangeError('limit must be a positive integer');
    this.#limit = limit;
  }

  /** A new group, whose tasks count against this pool's limit. */
  group(): TaskGroup {
    // Only tasks still running: a directory of a million files must not keep a million promises.
    const members = new Set<Promise<void>>();
    return {
      start: (task) => this.#start(task, members),
      settled: async () => {
        await Promise.all(members);
      },
    };
  }

  /** Throws the first task's failure, if any. */
  throwIfFailed(): void {
    if (this.#failure !== undefined) throw this.#failure.error;
  }

  async #start(task: () => Promise<void>, members: Set<Promise<void>>): Promise<void> {
    if (this.#running < this.#limit) {
      this.#running++;
    } else {
      // The task that ends hands its slot over, so no later caller can take it meanwhile.
      await new Promise<void>((resolve) => {
        this.#waiting.push(resolve);
      });
    }
    if (this.#failure !== undefined) {
      this.#release();
      throw this.#failure.error;
    }
    const member = task()
      .catch((error: unknown) => {
        this.#failure ??= { error };
      })
      .finally(() => {
        members.delete(member);
        this.#release();
      });
    members.add(member);
  }

  #release(): void {
    const next = this.#waiting.shift();
    if (next === undefined) this.#running--;
    else next();
  }
}
