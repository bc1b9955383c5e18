import { describe, expect, it, vi } from 'vitest';
import { createLogger } from '../src/util/logger.ts';

describe('createLogger', () => {
  it('writes Error fields with the given serializer, and does no work for disabled levels', () => {
    const lines: string[] = [];
    const serializeError = vi.fn((err: Error) => ({ kind: err.name, says: err.message }));
    const logger = createLogger({
      level: 'info',
      write: (line) => lines.push(line),
      now: () => 7,
      serializeError,
    });

    logger.debug({ err: new Error('quiet') }, 'not written');
    expect(serializeError).not.toHaveBeenCalled();

    logger.child({ claim: 'a/b' }).error({ err: new TypeError('boom'), n: 1 }, 'failed');
    expect(lines.map((line) => JSON.parse(line))).toEqual([
      {
        level: 'error',
        time: 7,
        claim: 'a/b',
        err: { kind: 'TypeError', says: 'boom' },
        n: 1,
        msg: 'failed',
      },
    ]);
  });

  it('writes type, message and stack of an Error by default', () => {
    const lines: string[] = [];
    createLogger({ write: (line) => lines.push(line) }).warn({ err: new RangeError('out') });
    expect(JSON.parse(lines[0] ?? '{}').err).toMatchObject({ type: 'RangeError', message: 'out' });
  });
});
