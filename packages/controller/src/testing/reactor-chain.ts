/**
 * The calls the fake API records and the reactor chain each one passes before the fake
 * answers it, as in client-go's fake clientset: a reactor can stub the answer, fail the call, or hold
 * it back.
 */
import type { CallOptions, KubeObject, PatchType } from '../client/resource-client.ts';

/** API verbs, as client-go's fake names them. */
export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete';

/** One recorded call. Objects and patches are copies taken when the call was made. */
export interface Action {
  readonly verb: Verb;
  /** Plural resource name, e.g. `persistentvolumes`. */
  readonly resource: string;
  readonly namespace?: string;
  readonly name?: string;
  /** The object sent by `create` and `update`. */
  readonly object?: KubeObject;
  readonly patch?: unknown;
  readonly patchType?: PatchType;
  /** Options of `list`, `watch` and `delete`, without the signal. */
  readonly options?: Readonly<Record<string, unknown>>;
}

/**
 * Sees each call before the fake does. Return nothing to pass the call on, `{ result }` to answer it
 * with `result` (a `T` for get/create/update/patch, an `ObjectList<T>` for list, ignored for delete
 * and watch, which then ends at once), or throw to fail it. May be async, e.g. to hold a call back.
 */
export type Reactor = (action: Action) => ReactorOutcome | Promise<ReactorOutcome>;

/** What a {@link Reactor} decided. */
export type ReactorOutcome = undefined | { readonly result: unknown };

/** Which calls a reactor sees; absent or `'*'` means all. */
export interface ReactorMatch {
  readonly verb?: Verb | '*';
  /** Plural resource name. */
  readonly resource?: string;
  readonly name?: string;
  readonly namespace?: string;
}

/** A failure to inject with `FakeKubeApi.failNext`. */
export interface InjectedFailure extends ReactorMatch {
  /** Thrown by the matching calls, e.g. `statusError('Conflict', '…')`. */
  readonly error: unknown;
  /** How many matching calls fail. Default 1. */
  readonly times?: number;
}

/** The record of calls and the reactors, in the order they see a call. */
export class ReactorChain {
  readonly #reactors: { readonly match: ReactorMatch; readonly react: Reactor }[] = [];
  readonly #actions: Action[] = [];

  /** Calls made so far, oldest first. */
  actions(): readonly Action[] {
    return [...this.#actions];
  }

  /** Forgets the calls recorded so far. */
  clearActions(): void {
    this.#actions.length = 0;
  }

  /** Puts `react` first for calls matching `match`; returns its removal. */
  prepend(match: ReactorMatch, react: Reactor): () => void {
    const entry = { match, react };
    this.#reactors.unshift(entry);
    return () => {
      const index = this.#reactors.indexOf(entry);
      if (index >= 0) this.#reactors.splice(index, 1);
    };
  }

  /** Records `action` and runs it through the reactors, then `fallback`; `beforeSend` first, as the real client. */
  async dispatch<R>(action: Action, call: CallOptions, fallback: () => R | Promise<R>): Promise<R> {
    const { signal } = call;
    signal?.throwIfAborted();
    call.beforeSend?.();
    this.#actions.push(action);
    for (const { match, react } of [...this.#reactors]) {
      if (!matches(match, action)) continue;
      const outcome = await abortable(
        Promise.resolve().then(() => react(action)),
        signal,
      );
      if (outcome !== undefined) return outcome.result as R;
    }
    signal?.throwIfAborted();
    return fallback();
  }
}

function matches(match: ReactorMatch, action: Action): boolean {
  return (
    (match.verb === undefined || match.verb === '*' || match.verb === action.verb) &&
    (match.resource === undefined || match.resource === '*' || match.resource === action.resource) &&
    (match.name === undefined || match.name === action.name) &&
    (match.namespace === undefined || match.namespace === action.namespace)
  );
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    if (signal.aborted) onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
