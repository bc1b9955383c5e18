#!/usr/bin/env node
/**
 * What decoding one LIST body costs, without a cluster: a generated `PersistentVolumeList` body of
 * `--items` PVs shaped as kube-apiserver serves them (server fields, one `managedFields` entry, about
 * 1.3 KB each), fed in 16 KiB chunks as HTTP/2 DATA frames arrive, through the controller's
 * `readListBody` with each item decoded and trimmed as an informer's cache gets it, and every item
 * kept. Each decode runs in a child process with the image's Node.js flags, and reports its CPU
 * (garbage collection included) and its peak heap. With `--compare <list-body.ts>` (e.g. an older
 * checkout's, with its `model-codec.ts` beside it) that decoder runs too, rounds alternating.
 *
 *   npm exec -- node --conditions=@kube-provisioner/source packages/bench/src/list-decode.ts \
 *     [--items 100000] [--rounds 3] [--compare /tmp/before/list-body.ts]
 */
import { execFile } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { getHeapStatistics } from 'node:v8';
import { positiveInteger } from './bench-options.ts';
import { median } from './compare-table.ts';
import { imageNodeFlags } from './ours-program.ts';

/** What one decode cost. */
interface DecodeCost {
  readonly cpuMs: number;
  readonly wallMs: number;
  readonly peakHeapMb: number;
  readonly bodyMb: number;
}

const chunkBytes = 16 * 1024;
const currentDecoder = fileURLToPath(new URL('../../controller/src/client/list-body.ts', import.meta.url));

const { values } = parseArgs({
  options: {
    items: { type: 'string', default: '100000' },
    rounds: { type: 'string', default: '3' },
    compare: { type: 'string' },
    child: { type: 'string' },
    'keep-managed-fields': { type: 'boolean', default: false },
  },
});
const items = positiveInteger('items', values.items);

/** One decoder to measure: its module, and whether it is asked to leave managedFields unparsed. */
interface Variant {
  readonly label: string;
  readonly decoder: string;
  readonly omitManagedFields: boolean;
}

if (values.child !== undefined) {
  const omit = !values['keep-managed-fields'];
  process.stdout.write(`${JSON.stringify(await decodeOnce(values.child, items, omit))}\n`);
} else {
  const rounds = positiveInteger('rounds', values.rounds);
  const variants: Variant[] = [
    { label: 'current, managedFields cut unparsed', decoder: currentDecoder, omitManagedFields: true },
    { label: 'current, managedFields parsed', decoder: currentDecoder, omitManagedFields: false },
  ];
  if (values.compare !== undefined) {
    variants.push({ label: values.compare, decoder: values.compare, omitManagedFields: false });
  }
  const costs = new Map<Variant, DecodeCost[]>(variants.map((variant) => [variant, []]));
  for (let index = 0; index < rounds; index++) {
    const order = index % 2 === 0 ? variants : [...variants].reverse();
    for (const variant of order) costs.get(variant)?.push(await inChild(variant));
  }
  for (const [variant, list] of costs) {
    const of = (pick: (cost: DecodeCost) => number): string => median(list.map(pick)).toFixed(0);
    process.stdout.write(
      `${variant.label}: ${items} items, ${of((c) => c.bodyMb)} MB body; ` +
        `CPU ${of((c) => c.cpuMs)} ms (garbage collection included), wall ${of((c) => c.wallMs)} ms, ` +
        `peak heap ${of((c) => c.peakHeapMb)} MiB (medians of ${rounds})\n`,
    );
  }
}

async function inChild(variant: Variant): Promise<DecodeCost> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [
      ...imageNodeFlags,
      '--expose-gc',
      fileURLToPath(import.meta.url),
      `--child=${variant.decoder}`,
      `--items=${items}`,
      ...(variant.omitManagedFields ? [] : ['--keep-managed-fields']),
    ],
    { maxBuffer: 1 << 20 },
  );
  return JSON.parse(stdout) as DecodeCost;
}

/** Decodes the generated body with the `readListBody` of module `decoder`, in this process. */
async function decodeOnce(decoder: string, count: number, omitManagedFields: boolean): Promise<DecodeCost> {
  const { readListBody } = (await import(pathToFileURL(decoder).href)) as {
    readListBody: <T>(
      body: AsyncIterable<Uint8Array>,
      decodeItem: (item: unknown) => T,
      options: { omitManagedFields: boolean },
    ) => Promise<{ items: T[]; list: Record<string, unknown> }>;
  };
  const { decodeObject } = (await import(new URL('./model-codec.ts', pathToFileURL(decoder)).href)) as {
    decodeObject: (wire: unknown, descriptor: { model: string }) => unknown;
  };
  const chunks = listBody(count);
  const bodyBytes = chunks.reduce((sum, chunk) => sum + chunk.length, 0);
  (globalThis as { gc?: () => void }).gc?.();
  let peakHeap = 0;
  let decoded = 0;
  const descriptor = { model: 'V1PersistentVolume' };
  const cpu = process.cpuUsage();
  const started = performance.now();
  const { items: kept } = await readListBody(
    chunksOf(chunks),
    (item) => {
      // As the informer's cache gets it: dates parsed, managed fields dropped.
      const object = decodeObject(item, descriptor) as { metadata: Record<string, unknown> };
      if (++decoded % 1000 === 0) peakHeap = Math.max(peakHeap, getHeapStatistics().used_heap_size);
      if (object.metadata.managedFields === undefined) return object;
      const { managedFields: _, ...metadata } = object.metadata;
      return { ...object, metadata };
    },
    { omitManagedFields },
  );
  const wallMs = performance.now() - started;
  const used = process.cpuUsage(cpu);
  if (kept.length !== count) throw new Error(`decoded ${kept.length} of ${count} items`);
  return {
    cpuMs: (used.user + used.system) / 1000,
    wallMs,
    peakHeapMb: Math.max(peakHeap, getHeapStatistics().used_heap_size) / 2 ** 20,
    bodyMb: bodyBytes / 1e6,
  };
}

async function* chunksOf(chunks: readonly Buffer[]): AsyncGenerator<Uint8Array> {
  yield* chunks;
}

/** The list's JSON body in {@link chunkBytes} pieces, cut wherever they fall (inside characters too). */
function listBody(count: number): Buffer[] {
  const parts = [
    '{"kind":"PersistentVolumeList","apiVersion":"v1","metadata":{"resourceVersion":"4242"},"items":[',
  ];
  for (let index = 0; index < count; index++) {
    parts.push(`${index === 0 ? '' : ','}${JSON.stringify(volume(index))}`);
  }
  parts.push(']}');
  const body = Buffer.from(parts.join(''));
  const chunks: Buffer[] = [];
  for (let at = 0; at < body.length; at += chunkBytes) chunks.push(body.subarray(at, at + chunkBytes));
  return chunks;
}

/** A foreign PV as the API server lists it (the bench's scale fill, after its create). */
function volume(index: number): unknown {
  const name = `foreign-run-1764256807918-${index}`;
  const time = '2026-11-27T15:21:07Z';
  const uid = `6b1f0c1e-8c1a-4a7e-9d43-${index.toString(16).padStart(12, '0')}`;
  return {
    metadata: {
      name,
      uid,
      resourceVersion: String(100_000 + index * 2),
      creationTimestamp: time,
      labels: { 'bench.kube-provisioner.io/run': 'run-1764256807918' },
      finalizers: ['kubernetes.io/pv-protection'],
      managedFields: [
        {
          manager: 'kube-provisioner-bench',
          operation: 'Update',
          apiVersion: 'v1',
          time,
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:metadata': { 'f:labels': { '.': {}, 'f:bench.kube-provisioner.io/run': {} } },
            'f:spec': {
              'f:accessModes': {},
              'f:capacity': { '.': {}, 'f:storage': {} },
              'f:claimRef': {
                '.': {},
                'f:apiVersion': {},
                'f:kind': {},
                'f:name': {},
                'f:namespace': {},
                'f:uid': {},
              },
              'f:hostPath': { '.': {}, 'f:path': {}, 'f:type': {} },
              'f:persistentVolumeReclaimPolicy': {},
              'f:storageClassName': {},
              'f:volumeMode': {},
            },
          },
        },
      ],
    },
    spec: {
      capacity: { storage: '1Gi' },
      hostPath: { path: `/srv/foreign/${name}`, type: 'DirectoryOrCreate' },
      accessModes: ['ReadWriteOnce'],
      claimRef: {
        kind: 'PersistentVolumeClaim',
        namespace: 'bench-foreign-run-1764256807918',
        name,
        uid: `0c9d2f7a-1e3b-4c5d-8e6f-${index.toString(16).padStart(12, '0')}`,
        apiVersion: 'v1',
      },
      persistentVolumeReclaimPolicy: 'Retain',
      volumeMode: 'Filesystem',
    },
    status: { phase: 'Bound', lastPhaseTransitionTime: time },
  };
}
