import { describe, expect, it } from 'vitest';
import { ListBodyDecoder, readListBody } from '../src/client/list-body.ts';

const list = {
  kind: 'PersistentVolumeList',
  apiVersion: 'v1',
  metadata: { resourceVersion: '42', continue: 'token', note: '"items":[{' },
  items: [
    { metadata: { name: 'a', annotations: { tricky: 'brace } bracket ] quote \\" backslash \\\\' } } },
    { metadata: { name: 'b' }, spec: { list: [1, { nested: [] }], unicode: 'é€😀' } },
    {},
  ],
  trailing: [{ kept: true }],
};

/** The list's JSON text in pieces of `size` characters. */
function pieces(text: string, size: number): string[] {
  const out: string[] = [];
  for (let at = 0; at < text.length; at += size) out.push(text.slice(at, at + size));
  return out;
}

function decode(texts: readonly string[]): { items: unknown[]; rest: Record<string, unknown> } {
  const items: unknown[] = [];
  const decoder = new ListBodyDecoder((item) => items.push(item));
  for (const text of texts) decoder.write(text);
  return { items, rest: decoder.end() };
}

describe('ListBodyDecoder', () => {
  it.each([1, 2, 3, 5, 7, 64, 100_000])(
    'yields each item and the list around them, whatever the piece size (%i characters)',
    (size) => {
      for (const text of [JSON.stringify(list), JSON.stringify(list, null, 2)]) {
        const { items, rest } = decode(pieces(text, size));
        expect(items).toEqual(list.items);
        expect(rest).toEqual({ ...list, items: [] });
      }
    },
  );

  it('hands each item on as soon as its text is complete, before the rest of the body arrives', () => {
    const items: unknown[] = [];
    const decoder = new ListBodyDecoder((item) => items.push(item));
    decoder.write('{"metadata":{"resourceVersion":"1"},"items":[{"n":1},{"n"');
    expect(items).toEqual([{ n: 1 }]);
    decoder.write(':2}]}');
    expect(items).toEqual([{ n: 1 }, { n: 2 }]);
    expect(decoder.end()).toEqual({ metadata: { resourceVersion: '1' }, items: [] });
  });

  it('rejects an item that is not an object', () => {
    const decoder = new ListBodyDecoder(() => {});
    expect(() => decoder.write('{"items":[{},3]}')).toThrow(/item is not an object/);
  });

  it.each(['{"items":[{"a":1}', '{"items":[{"a":"x', '{"metadata":{}'])(
    'rejects a body cut short: %s',
    (text) => {
      const decoder = new ListBodyDecoder(() => {});
      decoder.write(text);
      expect(() => decoder.end()).toThrow(/unexpected end/);
    },
  );

  it('rejects a body that is not a JSON object', () => {
    const decoder = new ListBodyDecoder(() => {});
    decoder.write('[]');
    expect(() => decoder.end()).toThrow(/not an object/);
  });
});

describe('readListBody', () => {
  it('decodes multi-byte characters split across chunks and passes each item through the decoder', async () => {
    const bytes = new TextEncoder().encode(JSON.stringify(list));
    async function* oneByteAtATime(): AsyncGenerator<Uint8Array> {
      for (let at = 0; at < bytes.length; at++) yield bytes.subarray(at, at + 1);
    }
    const { items, list: rest } = await readListBody(oneByteAtATime(), (item) => ({ decoded: item }));
    expect(items).toEqual(list.items.map((item) => ({ decoded: item })));
    expect(rest).toEqual({ ...list, items: [] });
  });
});
