/**
 * Unique supplemental GIDs per PV of a StorageClass, as the Go library's `gidallocator`, with one
 * change that matters: the table of taken GIDs is the saved PVs themselves, read with a quorum list
 * at every allocation, rather than a table filled once per process. A GID is taken once a saved PV
 * of the class carries it in {@link annVolumeGid}, or while this process holds it for a PV it is
 * making. A replica that led before, lost the Lease and leads again therefore never trusts what it
 * remembers from its earlier term, and a new leader sees every GID the old one got saved.
 */
import type { V1PersistentVolume } from '@kubernetes/client-node';
import type { ObjectList, ResourceClient } from '../client/resource-client.ts';
import { claimClassName } from '../internal/claim-fields.ts';
import type { ProvisionOptions } from '../provisioner.ts';
import { annBetaStorageClass } from '../wire-names.ts';
import { annVolumeGid, defaultGidMax, parseGid, parseGidRange } from './gid-range.ts';
import { MinMaxAllocator, RangeAllocatorError } from './min-max-allocator.ts';

/** Lists PVs straight from the API server; a `ResourceClient` of PersistentVolumes fits. */
export type PersistentVolumeLister = Pick<ResourceClient<V1PersistentVolume>, 'list'>;

/** Options of {@link GidAllocator}. */
export interface GidAllocatorOptions {
  /** Where the saved PVs are read. */
  readonly volumes: PersistentVolumeLister;
  /** PVs per page of the list; default 500. */
  readonly pageSize?: number | undefined;
}

/** What {@link GidAllocator.allocateNext} reads of a provision call. */
export type GidRequest = Pick<ProvisionOptions, 'pvName' | 'pvc' | 'storageClass'>;

/** The class of a PV: the beta annotation when present, else `spec.storageClassName`, as for claims. */
function volumeClassName(pv: Readonly<V1PersistentVolume>): string {
  const annotations = pv.metadata?.annotations;
  if (annotations !== undefined && Object.hasOwn(annotations, annBetaStorageClass)) {
    return annotations[annBetaStorageClass] ?? '';
  }
  return pv.spec?.storageClassName ?? '';
}

/** What an allocation reads of a listed PV, so a long list is not held whole while it is read. */
function slimVolume(pv: V1PersistentVolume): V1PersistentVolume {
  const annotations = pv.metadata?.annotations ?? {};
  const kept: Record<string, string> = {};
  for (const key of [annVolumeGid, annBetaStorageClass]) {
    const value = annotations[key];
    if (value !== undefined) kept[key] = value;
  }
  return {
    metadata: { name: pv.metadata?.name ?? '', annotations: kept },
    spec: { storageClassName: pv.spec?.storageClassName ?? '' },
  };
}

/** The GID recorded on `pv`, or `undefined` when it has none (or one that is not a GID). */
export function volumeGid(pv: Readonly<V1PersistentVolume>): number | undefined {
  const value = pv.metadata?.annotations?.[annVolumeGid];
  return value === undefined ? undefined : parseGid(value);
}

/**
 * Hands out GIDs from each class's `gidMin`/`gidMax` range so that no two PVs of a class share one.
 * Allocations of one class run one at a time (each lists the PVs), so two claims never get the same
 * GID from one process; across processes the Lease fence orders them, as every side effect.
 */
export class GidAllocator {
  readonly #volumes: PersistentVolumeLister;
  readonly #pageSize: number;
  /** Per class: PV name → GID handed out for it and not yet seen on a saved PV. */
  readonly #pending = new Map<string, Map<string, number>>();
  /** Per class: the allocation running now, which the next one waits for. */
  readonly #tails = new Map<string, Promise<unknown>>();

  constructor(options: GidAllocatorOptions) {
    this.#volumes = options.volumes;
    this.#pageSize = options.pageSize ?? 500;
  }

  /**
   * The GID of the PV `request.pvName` is to have: the one its saved PV already carries, else the
   * one handed out for it earlier by this process (a retried provision keeps its GID), else the
   * lowest GID of the class's range that no saved PV of the class carries and no other PV being made holds.
   *
   * @throws GidParameterError when the class's `gidMin`/`gidMax` are unusable.
   * @throws RangeAllocatorError `range-full` when every GID of the range is taken.
   * @throws the list's error when the PVs cannot be read.
   */
  async allocateNext(request: GidRequest, signal?: AbortSignal): Promise<number> {
    const range = parseGidRange(request.storageClass.parameters);
    const className = claimClassName(request.pvc);
    const previous = this.#tails.get(className) ?? Promise.resolve();
    // The tail never rejects: one failed allocation does not fail the next.
    const run = previous.then(() => this.#allocate(className, request.pvName, range, signal));
    const tail = run.catch(() => undefined);
    this.#tails.set(className, tail);
    void tail.then(() => {
      if (this.#tails.get(className) === tail) this.#tails.delete(className);
    });
    return await run;
  }

  /**
   * Frees the GID of `pv` that this process holds for it. Call it once the volume's data is gone
   * or kept for good (on delete). The GID becomes free for others once the PV object is gone too:
   * until then the saved PV still holds it.
   */
  release(pv: Readonly<V1PersistentVolume>): void {
    const pending = this.#pending.get(volumeClassName(pv));
    pending?.delete(pv.metadata?.name ?? '');
  }

  /**
   * Frees the GID this process holds for the PV `request.pvName`, for a provision that ends without
   * a PV carrying it (the provisioner decided the volume gets none).
   */
  forget(request: Pick<GidRequest, 'pvName' | 'pvc'>): void {
    this.#pending.get(claimClassName(request.pvc))?.delete(request.pvName);
  }

  async #allocate(
    className: string,
    pvName: string,
    range: { readonly min: number; readonly max: number },
    signal: AbortSignal | undefined,
  ): Promise<number> {
    signal?.throwIfAborted();
    const saved = await this.#savedGids(className, signal);
    const own = saved.byVolume.get(pvName);
    const pending = this.#pending.get(className) ?? new Map<string, number>();
    this.#pending.set(className, pending);
    if (own !== undefined) {
      pending.delete(pvName);
      return own;
    }
    const table = new MinMaxAllocator(0, defaultGidMax);
    for (const gid of saved.byVolume.values()) if (!table.has(gid)) table.allocate(gid);
    for (const [name, gid] of pending) {
      // On a saved PV now: the list covers it from here on.
      if (saved.names.has(name)) pending.delete(name);
      else if (!table.has(gid)) table.allocate(gid);
    }
    const held = pending.get(pvName);
    if (held !== undefined && held >= range.min && held <= range.max) return held;
    table.setRange(range.min, range.max);
    try {
      const gid = table.allocateNext();
      pending.set(pvName, gid);
      return gid;
    } catch (err) {
      if (!(err instanceof RangeAllocatorError)) throw err;
      throw new RangeAllocatorError(
        'range-full',
        `every GID from ${range.min} to ${range.max} of StorageClass ${JSON.stringify(className)} is in use; widen gidMin/gidMax or delete volumes`,
      );
    }
  }

  /** The GIDs on saved PVs of `className` by PV name, and the names of all its PVs. */
  async #savedGids(
    className: string,
    signal: AbortSignal | undefined,
  ): Promise<{ byVolume: Map<string, number>; names: Set<string> }> {
    const byVolume = new Map<string, number>();
    const names = new Set<string>();
    let page: ObjectList<V1PersistentVolume> | undefined;
    do {
      const token: string | undefined = page?.metadata?.continue;
      page = await this.#volumes.list({
        limit: this.#pageSize,
        transform: slimVolume,
        ...(token === undefined ? {} : { continue: token }),
        ...(signal === undefined ? {} : { signal }),
      });
      for (const pv of page.items) {
        if (volumeClassName(pv) !== className) continue;
        const name = pv.metadata?.name ?? '';
        names.add(name);
        const gid = volumeGid(pv);
        if (gid !== undefined) byVolume.set(name, gid);
      }
    } while ((page.metadata?.continue ?? '') !== '');
    return { byVolume, names };
  }
}
