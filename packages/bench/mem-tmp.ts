const { readFileSync } = await import('node:fs');
const { ObjectSerializer } = await import('@kubernetes/client-node/dist/gen/models/ObjectSerializer.js');
const { pv, pvc } = JSON.parse(readFileSync('/tmp/p2env/sample.json', 'utf8').split('\n')[0]!);
const t0 = performance.now(); const cpu0 = process.cpuUsage();
const store = new Map<string, unknown>();
(globalThis as { store?: unknown }).store = store;
for (let i = 0; i < 10000; i++) {
  for (const [o, model] of [[pv, 'V1PersistentVolume'], [pvc, 'V1PersistentVolumeClaim']] as const) {
    const wire = JSON.parse(JSON.stringify(o).replaceAll('foreign-sample-0', `foreign-sample-${i}`));
    const obj = ObjectSerializer.deserialize(wire, model, '') as { metadata: { name: string; namespace?: string; managedFields?: unknown } };
    const { managedFields: _, ...metadata } = obj.metadata;
    store.set(`${model}/${obj.metadata.namespace ?? ''}/${obj.metadata.name}`, { ...obj, metadata });
  }
}
const m = process.memoryUsage(); const cpu = process.cpuUsage(cpu0);
console.log(`${process.execArgv.join(' ')} rss ${(m.rss / 2 ** 20).toFixed(1)} MiB, cpu ${((cpu.user + cpu.system) / 1000).toFixed(0)} ms`);
