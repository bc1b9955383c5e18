/**
 * Tells the scheduler what a per-node root can hold: one `CSIStorageCapacity` per class this
 * provisioner serves, for this node, in the instance's namespace: `capacity` the room of the roots
 * the class may use together, `maximumVolumeSize` the roomiest one's. The scheduler reads them only
 * when a CSIDriver of the provisioner's name says `storageCapacity: true` (see the README,
 * "Capacity-aware scheduling"). Objects are written only when their numbers change, and each root's
 * room is published rounded down to a step of at most 1 % of its size, so a busy disk's free space,
 * which moves every minute, does not cost an API write per class and node every minute: the
 * scheduler sees up to 1 % less room than there is, never more. The publisher remembers what it wrote
 * and lists its objects again only every {@link relistEvery} publications, or after a failure.
 */
import { createHash } from 'node:crypto';
import type { Logger, OperationContext } from '@kube-provisioner/controller';
import {
  isNotFound,
  type ResourceClient,
  type ResourceDescriptor,
} from '@kube-provisioner/controller/client';
import type { V1CSIStorageCapacity, V1OwnerReference, V1StorageClass } from '@kubernetes/client-node';
import { type ClassParameters, parseClassParameters } from './class-parameters.ts';
import { type RootCapacity, roomFor } from './root-capacity.ts';
import { rootWanted } from './root-placement.ts';
import { quantityBytes } from './storage-quantity.ts';

/** The `storage.k8s.io/v1` resource, for the controller's clients. */
export const csiStorageCapacities: ResourceDescriptor<V1CSIStorageCapacity> = {
  group: 'storage.k8s.io',
  version: 'v1',
  plural: 'csistoragecapacities',
  kind: 'CSIStorageCapacity',
  namespaced: true,
  model: 'V1CSIStorageCapacity',
};

/** Label on every published object: a hash of the node name (names may be longer than a label value). */
export const labelCapacityNode = 'hostpath.kube-provisioner.io/capacity-node';

/** Reads a root's capacity; a `RootCapacityReader` fits. */
export interface CapacitySource {
  /** The capacity now. */
  read(context: Pick<OperationContext, 'signal'>): Promise<RootCapacity>;
}

/** The capacity of one of a node's named roots. */
export interface NamedCapacitySource extends CapacitySource {
  /** The root's name, as class parameter `roots` names it. */
  readonly name: string;
  /** Its labels, which class parameter `roots` may name instead. */
  readonly labels?: readonly string[] | undefined;
}

/** Options of {@link CapacityPublisher}. */
export interface CapacityPublisherOptions {
  readonly capacities: Pick<ResourceClient<V1CSIStorageCapacity>, 'list' | 'create' | 'update' | 'delete'>;
  /** StorageClasses: those whose provisioner is {@link provisionerName} are published. */
  readonly classes: Pick<ResourceClient<V1StorageClass>, 'list'>;
  /** The root's capacity (a `RootCapacityReader` fits), or those of the node's named roots. */
  readonly capacity: CapacitySource | { readonly roots: readonly NamedCapacitySource[] };
  readonly provisionerName: string;
  readonly nodeName: string;
  /**
   * The node label the scheduler matches (`nodeTopology`), and this node's value of it (read once,
   * e.g. from the Node object).
   */
  readonly topology: {
    readonly key: string;
    /** This node's value of the label. */
    value(signal: AbortSignal): Promise<string>;
  };
  /** Where the objects live: the instance's namespace. */
  readonly namespace: string;
  /** Owner of the objects (the instance's Pod), so they are garbage-collected with it. */
  readonly owner?: V1OwnerReference | undefined;
  readonly logger: Logger;
}

/**
 * Publications between two lists of the node's objects: the publisher is their only writer, so in
 * between it trusts what it wrote; the list catches objects deleted or changed by someone else.
 */
export const relistEvery = 10;

/**
 * `bytes` of a root of `capacityBytes`, rounded down to a multiple of the largest power of two not
 * above 1 % of the root's size (at least 1 byte).
 */
export function publishedBytes(bytes: number, capacityBytes: number): number {
  const step = 2 ** Math.floor(Math.log2(Math.max(1, capacityBytes / 100)));
  return Math.floor(bytes / step) * step;
}

/** The deterministic object name of `node`'s capacity for `className`: a restart updates it. */
export function capacityObjectName(node: string, className: string): string {
  const hash = createHash('sha256').update(`${node}\0${className}`).digest('hex').slice(0, 16);
  // `hostpath-` + a readable prefix + the hash: at most 63 characters, a valid DNS label.
  const readable = `${node}-${className}`
    .toLowerCase()
    .replace(/[^a-z0-9-]+/gu, '-')
    .slice(0, 63 - 'hostpath-'.length - 17)
    .replace(/-+$/u, '');
  return `hostpath-${readable}-${hash}`;
}

function nodeLabelValue(node: string): string {
  return createHash('sha256').update(node).digest('hex').slice(0, 32);
}

/** Publishes and withdraws one node's `CSIStorageCapacity` objects. */
export class CapacityPublisher {
  readonly #options: CapacityPublisherOptions;
  readonly #selector: string;
  /** The publication in progress and whether another was asked for meanwhile (coalescing). */
  #running: Promise<void> | undefined;
  #again = false;
  #topologyValue: string | undefined;
  /** This node's objects as last listed or written, by name; `undefined`: list them next time. */
  #known: Map<string, V1CSIStorageCapacity> | undefined;
  /** Publications since the last list. */
  #sinceList = 0;

  constructor(options: CapacityPublisherOptions) {
    this.#options = options;
    this.#selector = `${labelCapacityNode}=${nodeLabelValue(options.nodeName)}`;
  }

  /**
   * Publishes soon: calls during a publication make one more after it, never more. Failures are
   * logged; the next call or tick retries.
   */
  request(signal: AbortSignal): Promise<void> {
    if (this.#running !== undefined) {
      this.#again = true;
      return this.#running;
    }
    const run = async (): Promise<void> => {
      do {
        this.#again = false;
        try {
          await this.publish({ signal });
        } catch (err) {
          if (signal.aborted) return;
          this.#options.logger.warn({ err }, 'publishing the root capacity failed');
        }
      } while (this.#again && !signal.aborted);
    };
    this.#running = run().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  /**
   * One publication: creates or updates the object of each served class whose numbers changed, and
   * deletes those of classes no longer served.
   */
  async publish(context: Pick<OperationContext, 'signal'>): Promise<void> {
    const { signal } = context;
    const [classes, known, roots] = await Promise.all([
      this.#options.classes.list({ signal }),
      this.#knownObjects(signal),
      this.#readRoots(context),
    ]);
    this.#topologyValue ??= await this.#options.topology.value(signal);
    // Forgotten until this publication has written all it must: a failure half-way lists again.
    this.#known = undefined;
    const wanted = new Set<string>();
    for (const storageClass of classes.items) {
      if (storageClass.provisioner !== this.#options.provisionerName) continue;
      const className = storageClass.metadata?.name ?? '';
      const parameters = parametersOf(storageClass);
      if (className === '' || parameters === undefined) continue;
      const name = capacityObjectName(this.#options.nodeName, className);
      wanted.add(name);
      const desired = this.#desired(name, className, classRoom(roots, parameters));
      known.set(name, await this.#write(known.get(name), desired, signal));
    }
    for (const [name] of known) {
      if (wanted.has(name)) continue;
      await this.#delete(name, signal);
      known.delete(name);
    }
    this.#known = known;
  }

  /** This node's objects: listed every {@link relistEvery} publications, else as last written. */
  async #knownObjects(signal: AbortSignal): Promise<Map<string, V1CSIStorageCapacity>> {
    if (this.#known !== undefined && this.#sinceList < relistEvery) {
      this.#sinceList += 1;
      return this.#known;
    }
    const { namespace } = this.#options;
    const existing = await this.#options.capacities.list({
      namespace,
      labelSelector: this.#selector,
      signal,
    });
    this.#sinceList = 1;
    return new Map(existing.items.map((object) => [object.metadata?.name ?? '', object]));
  }

  /**
   * Deletes every object of this node, once the publication in progress (stopped by the signal given
   * to {@link request}) has ended: the instance is going away cleanly. `capacities` may be another
   * client than the publisher's, e.g. one that outlives the controller's during shutdown. Resolves
   * with the number of objects found.
   */
  async withdraw(
    context: Pick<OperationContext, 'signal'>,
    capacities: Pick<ResourceClient<V1CSIStorageCapacity>, 'list' | 'delete'> = this.#options.capacities,
  ): Promise<number> {
    const { signal } = context;
    const { namespace } = this.#options;
    await this.#running;
    this.#known = undefined;
    const existing = await capacities.list({ namespace, labelSelector: this.#selector, signal });
    for (const object of existing.items) {
      await deleteIfPresent(capacities, object.metadata?.name ?? '', namespace, signal);
    }
    return existing.items.length;
  }

  /** Each root's capacity now; the one root of a bare `--root` has no name. */
  async #readRoots(context: Pick<OperationContext, 'signal'>): Promise<readonly RootReading[]> {
    const { capacity } = this.#options;
    if (!('roots' in capacity)) return [{ root: undefined, capacity: await capacity.read(context) }];
    return Promise.all(capacity.roots.map(async (root) => ({ root, capacity: await root.read(context) })));
  }

  #desired(name: string, className: string, room: ClassRoom): V1CSIStorageCapacity {
    const { owner, topology, namespace } = this.#options;
    return {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'CSIStorageCapacity',
      metadata: {
        name,
        namespace,
        labels: { [labelCapacityNode]: nodeLabelValue(this.#options.nodeName) },
        ...(owner === undefined ? {} : { ownerReferences: [owner] }),
      },
      storageClassName: className,
      nodeTopology: { matchLabels: { [topology.key]: this.#topologyValue ?? this.#options.nodeName } },
      capacity: String(room.totalBytes),
      // A volume lives on one root: the largest is the roomiest root's room.
      maximumVolumeSize: String(room.largestBytes),
    };
  }

  /** Creates or updates the object unless it already says `desired`; resolves with the object as stored. */
  async #write(
    current: V1CSIStorageCapacity | undefined,
    desired: V1CSIStorageCapacity,
    signal: AbortSignal,
  ): Promise<V1CSIStorageCapacity> {
    const { capacities, namespace } = this.#options;
    if (current === undefined) return capacities.create(desired, { namespace, signal });
    if (unchanged(current, desired)) return current;
    // storageClassName is immutable, and the name is derived from it: only numbers, topology and owner change.
    const resourceVersion = current.metadata?.resourceVersion;
    const metadata = { ...desired.metadata, ...(resourceVersion === undefined ? {} : { resourceVersion }) };
    return capacities.update({ ...desired, metadata }, { namespace, signal });
  }

  #delete(name: string, signal: AbortSignal): Promise<void> {
    return deleteIfPresent(this.#options.capacities, name, this.#options.namespace, signal);
  }
}

async function deleteIfPresent(
  capacities: Pick<ResourceClient<V1CSIStorageCapacity>, 'delete'>,
  name: string,
  namespace: string,
  signal: AbortSignal,
): Promise<void> {
  try {
    await capacities.delete(name, { namespace, signal });
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
}

interface RootReading {
  /** The named root, `undefined` for a bare `--root`. */
  readonly root: Pick<NamedCapacitySource, 'name' | 'labels'> | undefined;
  readonly capacity: RootCapacity;
}

/** The room of a class on this node: all its roots together, and the roomiest one. */
interface ClassRoom {
  readonly totalBytes: number;
  readonly largestBytes: number;
}

/**
 * The room of a class of `parameters` among `roots`: only the roots it may use count. A class naming
 * roots gets none on a node without them (or with one unnamed root), so the scheduler looks elsewhere.
 */
function classRoom(roots: readonly RootReading[], parameters: ClassParameters): ClassRoom {
  const names = parameters.roots === undefined ? undefined : new Set(parameters.roots);
  let totalBytes = 0;
  let largestBytes = 0;
  for (const reading of roots) {
    if (names !== undefined && (reading.root === undefined || !rootWanted(reading.root, names))) continue;
    const bytes = publishedBytes(
      roomFor(reading.capacity, parameters.enforceSize),
      reading.capacity.capacityBytes,
    );
    totalBytes += bytes;
    largestBytes = Math.max(largestBytes, bytes);
  }
  return { totalBytes, largestBytes };
}

/** The class's parameters; `undefined` for parameters this provisioner refuses. */
function parametersOf(storageClass: Readonly<V1StorageClass>): ClassParameters | undefined {
  try {
    return parseClassParameters(storageClass.parameters);
  } catch {
    // Its claims fail anyway; publishing nothing keeps the scheduler from sending them here.
    return undefined;
  }
}

/** Compared as bytes: the API server rewrites quantities in canonical form (`10Gi`). */
function unchanged(current: V1CSIStorageCapacity, desired: V1CSIStorageCapacity): boolean {
  const same = (a: string | undefined, b: string | undefined) => quantityBytes(a) === quantityBytes(b);
  const topology = JSON.stringify(current.nodeTopology ?? {}) === JSON.stringify(desired.nodeTopology);
  const owners = (object: V1CSIStorageCapacity) =>
    (object.metadata?.ownerReferences ?? []).map((owner) => owner.uid).join(',');
  return (
    same(current.capacity, desired.capacity) &&
    same(current.maximumVolumeSize, desired.maximumVolumeSize) &&
    current.storageClassName === desired.storageClassName &&
    topology &&
    owners(current) === owners(desired)
  );
}
