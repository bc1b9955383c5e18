import { describe, expect, it } from 'vitest';
import { IgnoredError, InfeasibleError, isInfeasibleError, provisionFailure } from '../src/index.ts';

const refused = (err: unknown): boolean => err instanceof Error && err.message.startsWith('refused');

describe('provisionFailure', () => {
  it('finishes the operation and passes ignored and infeasible errors unchanged', () => {
    const ignored = new IgnoredError('not mine');
    const infeasible = new InfeasibleError('bad parameter');
    expect(provisionFailure(ignored, refused)).toEqual({ error: ignored, state: 'Finished' });
    expect(provisionFailure(infeasible, refused).error).toBe(infeasible);
  });

  it('makes errors the predicate accepts infeasible, keeping message and cause', () => {
    const cause = new Error('refused: permission denied');
    const { error, state } = provisionFailure(cause, refused);
    expect(state).toBe('Finished');
    expect(isInfeasibleError(error)).toBe(true);
    expect(error.message).toBe('refused: permission denied');
    expect(error.cause).toBe(cause);
  });

  it('returns other errors as they are and wraps non-errors', () => {
    const plain = new Error('disk on fire');
    expect(provisionFailure(plain, refused).error).toBe(plain);
    const wrapped = provisionFailure('boom').error;
    expect(wrapped).toBeInstanceOf(Error);
    expect(wrapped.message).toBe('boom');
    expect(isInfeasibleError(wrapped)).toBe(false);
  });
});
