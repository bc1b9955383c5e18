/**
 * A `ResourceClient` test double for informer and reflector tests: each LIST answer is scripted in
 * advance, and each WATCH call hands the test a stream to push events into, close or fail.
 */
import type { V1ObjectMeta, V1Status } from '@kubernetes/client-node';
import { ApiError } from '../../src/client/api-error.ts';
import type {
  KubeObject,
  ListOptions,
  ObjectList,
  ResourceClient,
  ResourceDescriptor,
  WatchEvent,
  WatchOptions,
} from '../../src/client/resource-client.ts';

/** A test object: only metadata matters to the informer. */
export interface TestObject extends KubeObject {
  metadata: V1ObjectMeta;
  data?: string;
}

export const testResource: ResourceDescriptor<TestObject> = {
  group: '',
  version: 'v1',
  plural: 'things',
  kind: 'Thing',
  namespaced: true,
  model: 'Thing',
};

/** Builds a namespaced test object. */
export function thing(name: string, resourceVersion: string, extra: Partial<V1ObjectMeta> = {}): TestObject {
  return { metadata: { namespace: 'ns', name, uid: `uid-${name}`, resourceVersion, ...extra } };
}

/** An HTTP-style API error, e.g. 410 Expired. */
export function apiError(statusCode: number, reason: string): ApiError {
  return new ApiError(statusCode, reason, { reason });
}

/** A transport failure shaped like undici's (`TypeError` with a coded cause). */
export function networkError(code: string, message = 'fetch failed'): TypeError {
  return new TypeError(message, { cause: Object.assign(new Error(code), { code }) });
}

/** One open WATCH call. */
export class ScriptedWatch<T extends KubeObject> {
  readonly options: Omit<WatchOptions, 'signal'>;
  readonly #onEvent: (event: WatchEvent<T>) => void;
  readonly #settle: { resolve: () => void; reject: (err: unknown) => void };
  #open = true;

  constructor(
    options: Omit<WatchOptions, 'signal'>,
    onEvent: (event: WatchEvent<T>) => void,
    settle: { resolve: () => void; reject: (err: unknown) => void },
  ) {
    this.options = options;
    this.#onEvent = onEvent;
    this.#settle = settle;
  }

  get open(): boolean {
    return this.#open;
  }

  added(obj: T): this {
    return this.#emit({ type: 'ADDED', object: obj });
  }

  modified(obj: T): this {
    return this.#emit({ type: 'MODIFIED', object: obj });
  }

  deleted(obj: T): this {
    return this.#emit({ type: 'DELETED', object: obj });
  }

  bookmark(resourceVersion: string): this {
    return this.#emit({ type: 'BOOKMARK', object: { metadata: { resourceVersion } } as T });
  }

  error(status: V1Status): this {
    return this.#emit({ type: 'ERROR', object: status });
  }

  /** The server ends the stream normally. */
  close(): void {
    this.#end(() => this.#settle.resolve());
  }

  /** The stream fails. */
  fail(err: unknown): void {
    this.#end(() => this.#settle.reject(err));
  }

  /** Called when the client aborts. */
  abort(): void {
    this.#end(() => this.#settle.resolve());
  }

  #emit(event: WatchEvent<T>): this {
    if (!this.#open) throw new Error('watch is closed');
    this.#onEvent(event);
    return this;
  }

  #end(settle: () => void): void {
    if (!this.#open) return;
    this.#open = false;
    settle();
  }
}

type ListAnswer<T> = ObjectList<T> | Error;

/** Scripted LIST answers and observable WATCH calls. */
export class ScriptedResourceClient<T extends KubeObject = TestObject> implements ResourceClient<T> {
  readonly descriptor: ResourceDescriptor<T>;
  /** Every LIST call's options, signal removed. */
  readonly listCalls: Omit<ListOptions<T>, 'signal' | 'transform'>[] = [];
  /** Every WATCH call, in order. */
  readonly watches: ScriptedWatch<T>[] = [];
  readonly #answers: ListAnswer<T>[] = [];
  readonly #listWaiters: ((answer: ListAnswer<T>) => void)[] = [];
  readonly #watchWaiters: ((watch: ScriptedWatch<T>) => void)[] = [];
  #consumedWatches = 0;

  constructor(descriptor: ResourceDescriptor<T>) {
    this.descriptor = descriptor;
  }

  /** Scripts the next LIST answer: a page (`items`, `resourceVersion`, optional `continue`) or an error. */
  answerList(answer: { items: T[]; resourceVersion: string; continue?: string } | Error): this {
    const scripted: ListAnswer<T> =
      answer instanceof Error
        ? answer
        : {
            items: answer.items,
            metadata: {
              resourceVersion: answer.resourceVersion,
              ...(answer.continue === undefined ? {} : { continue: answer.continue }),
            },
          };
    const waiter = this.#listWaiters.shift();
    if (waiter) waiter(scripted);
    else this.#answers.push(scripted);
    return this;
  }

  /** Resolves with the next WATCH call not yet returned by this method. */
  nextWatch(): Promise<ScriptedWatch<T>> {
    const index = this.#consumedWatches++;
    const existing = this.watches[index];
    if (existing) return Promise.resolve(existing);
    return new Promise((resolve) => this.#watchWaiters.push(resolve));
  }

  async list(options: ListOptions<T> = {}): Promise<ObjectList<T>> {
    const { signal, transform, ...rest } = options;
    this.listCalls.push(rest);
    const answer =
      this.#answers.shift() ??
      (await new Promise<ListAnswer<T>>((resolve, reject) => {
        this.#listWaiters.push(resolve);
        signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
      }));
    if (answer instanceof Error) throw answer;
    return transform === undefined ? answer : { ...answer, items: answer.items.map(transform) };
  }

  watch(options: WatchOptions, onEvent: (event: WatchEvent<T>) => void): Promise<void> {
    const { signal, ...rest } = options;
    return new Promise((resolve, reject) => {
      const watch = new ScriptedWatch<T>(rest, onEvent, { resolve, reject });
      this.watches.push(watch);
      if (signal?.aborted) watch.abort();
      else signal?.addEventListener('abort', () => watch.abort(), { once: true });
      this.#watchWaiters.shift()?.(watch);
    });
  }

  get(): Promise<T> {
    return Promise.reject(new Error('get is not scripted'));
  }

  create(): Promise<T> {
    return Promise.reject(new Error('create is not scripted'));
  }

  update(): Promise<T> {
    return Promise.reject(new Error('update is not scripted'));
  }

  patch(): Promise<T> {
    return Promise.reject(new Error('patch is not scripted'));
  }

  delete(): Promise<void> {
    return Promise.reject(new Error('delete is not scripted'));
  }
}
