/**
 * The root's capacity as Prometheus gauges (`kube_provisioner_root_*`), labelled with the root's
 * path (each of a node's named roots its own), set at each read of a {@link RootCapacityReader}.
 */
import { Gauge, type Registry } from 'prom-client';
import type { RootCapacity, RootCapacityReader } from './root-capacity.ts';

type Reader = Pick<RootCapacityReader, 'read' | 'space'>;

/** `reader`, with its readings also set on gauges registered in `registry`. */
export function gaugedCapacityReader(reader: Reader, registry: Registry, root: string): Reader {
  // A node with several roots has one reader per root, all on the same gauges.
  const gauge = (name: string, help: string): Gauge =>
    (registry.getSingleMetric(`kube_provisioner_root_${name}`) as Gauge | undefined) ??
    new Gauge({ name: `kube_provisioner_root_${name}`, help, labelNames: ['root'], registers: [registry] });
  const capacity = gauge('capacity_bytes', "Size of the root's file system.");
  const free = gauge('free_bytes', "Bytes still free on the root's file system.");
  const reserved = gauge('reserved_bytes', 'Capacities of the volumes on the root whose size is enforced.');
  const volumes = gauge('volumes', 'Bound volumes on the root.');
  const labels = { root };
  return {
    async space() {
      const space = await reader.space();
      capacity.set(labels, space.capacityBytes);
      free.set(labels, space.freeBytes);
      return space;
    },
    async read(context) {
      const read: RootCapacity = await reader.read(context);
      capacity.set(labels, read.capacityBytes);
      free.set(labels, read.freeBytes);
      reserved.set(labels, read.reservedBytes);
      volumes.set(labels, read.volumes);
      return read;
    },
  };
}
