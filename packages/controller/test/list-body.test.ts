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

const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);

/** The list's JSON text as UTF-8 in pieces of `size` bytes, cut inside characters too. */
function pieces(text: string, size: number): Uint8Array[] {
  const bytes = utf8(text);
  const out: Uint8Array[] = [];
  for (let at = 0; at < bytes.length; at += size) out.push(bytes.subarray(at, at + size));
  return out;
}

function decode(chunks: readonly Uint8Array[]): { items: unknown[]; rest: Record<string, unknown> } {
  const items: unknown[] = [];
  const decoder = new ListBodyDecoder((item) => items.push(item));
  for (const chunk of chunks) decoder.write(chunk);
  return { items, rest: decoder.end() };
}

describe('ListBodyDecoder', () => {
  it.each([1, 2, 3, 5, 7, 64, 100_000])(
    'yields each item and the list around them, whatever the piece size (%i bytes)',
    (size) => {
      for (const text of [JSON.stringify(list), JSON.stringify(list, null, 2)]) {
        const { items, rest } = decode(pieces(text, size));
        expect(items).toEqual(list.items);
        expect(rest).toEqual({ ...list, items: [] });
      }
    },
  );

  it.each([1, 3, 64, 100_000])(
    'leaves each item’s metadata.managedFields out when asked, whatever the piece size (%i bytes)',
    (size) => {
      const managedFields = [{ manager: 'm', fieldsV1: { 'f:spec': {} } }];
      const withFields = {
        ...list,
        items: list.items.map((item, index) => ({ ...item, metadata: { name: `i${index}`, managedFields } })),
      };
      const items: unknown[] = [];
      const decoder = new ListBodyDecoder((item) => items.push(item), { omitManagedFields: true });
      for (const chunk of pieces(JSON.stringify(withFields), size)) decoder.write(chunk);
      expect(items).toEqual(list.items.map((item, index) => ({ ...item, metadata: { name: `i${index}` } })));
      expect(decoder.end()).toEqual({ ...list, items: [] });
    },
  );

  it('hands each item on as soon as its text is complete, before the rest of the body arrives', () => {
    const items: unknown[] = [];
    const decoder = new ListBodyDecoder((item) => items.push(item));
    decoder.write(utf8('{"metadata":{"resourceVersion":"1"},"items":[{"n":1},{"n"'));
    expect(items).toEqual([{ n: 1 }]);
    decoder.write(utf8(':2}]}'));
    expect(items).toEqual([{ n: 1 }, { n: 2 }]);
    expect(decoder.end()).toEqual({ metadata: { resourceVersion: '1' }, items: [] });
  });

  it('rejects an item that is not an object', () => {
    const decoder = new ListBodyDecoder(() => {});
    expect(() => decoder.write(utf8('{"items":[{},3]}'))).toThrow(/item is not an object/);
  });

  it.each(['{"items":[{"a":1}', '{"items":[{"a":"x', '{"metadata":{}'])(
    'rejects a body cut short: %s',
    (text) => {
      const decoder = new ListBodyDecoder(() => {});
      decoder.write(utf8(text));
      expect(() => decoder.end()).toThrow(/unexpected end/);
    },
  );

  it('rejects a body that is not a JSON object', () => {
    const decoder = new ListBodyDecoder(() => {});
    decoder.write(utf8('[]'));
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
