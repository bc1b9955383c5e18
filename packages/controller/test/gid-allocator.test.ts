import type { V1PersistentVolume } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { ListOptions } from '../src/client/resource-client.ts';
import {
  annVolumeGid,
  GidAllocator,
  GidParameterError,
  hasGidParameters,
  parseGidRange,
  RangeAllocatorError,
} from '../src/gid-allocator/index.ts';
import { claimFixture, provisionOptionsFor, storageClassFixture } from '../src/testing/index.ts';

/** PVs as the API server holds them, listed in pages of `limit`. */
class SavedVolumes {
  items: V1PersistentVolume[] = [];
  lists = 0;

  async list(options?: ListOptions<V1PersistentVolume>) {
    this.lists++;
    const start = Number(options?.continue ?? '0');
    const end = start + (options?.limit ?? this.items.length);
    const transform = options?.transform ?? ((pv: V1PersistentVolume) => pv);
    const page = this.items.slice(start, end).map(transform);
    return {
      items: page,
      metadata: { resourceVersion: '1', ...(end < this.items.length ? { continue: String(end) } : {}) },
    };
  }

  save(pvName: string, className: string, gid: number | string | undefined): void {
    this.items.push({
      metadata: {
        name: pvName,
        ...(gid === undefined ? {} : { annotations: { [annVolumeGid]: String(gid) } }),
      },
      spec: { storageClassName: className },
    });
  }

  remove(pvName: string): void {
    this.items = this.items.filter((pv) => pv.metadata?.name !== pvName);
  }
}

function requestFor(className: string, parameters: Record<string, string>, uid?: string) {
  const pvc = claimFixture({ storageClassName: className, ...(uid === undefined ? {} : { uid }) });
  return provisionOptionsFor(pvc, storageClassFixture({ name: className, parameters }));
}

function gidError(action: () => unknown): GidParameterError {
  try {
    action();
  } catch (err) {
    if (err instanceof GidParameterError) return err;
    throw err;
  }
  throw new Error('expected a GidParameterError');
}

describe('gidMin and gidMax', () => {
  it('default to 2000 and 2147483647 when a class leaves them out', () => {
    expect(parseGidRange({})).toEqual({ min: 2000, max: 2_147_483_647 });
    expect(parseGidRange(undefined)).toEqual({ min: 2000, max: 2_147_483_647 });
    expect(parseGidRange({ gidMax: '3000' })).toEqual({ min: 2000, max: 3000 });
    expect(parseGidRange({ gidMin: '5000' })).toEqual({ min: 5000, max: 2_147_483_647 });
  });

  it('are read in any case of their keys, as the Go library reads them', () => {
    expect(parseGidRange({ GIDMIN: '4000', gidmax: '4010', other: 'x' })).toEqual({ min: 4000, max: 4010 });
    expect(hasGidParameters({ GidMax: '4010' })).toBe(true);
    expect(hasGidParameters({ onDelete: 'delete' })).toBe(false);
  });

  it('reject values that are no GID or lie outside 2000 to 2147483647, naming the parameter', () => {
    expect(gidError(() => parseGidRange({ gidMin: 'abc' })).message).toBe(
      'invalid value "abc" for parameter "gidMin": a GID from 2000 to 2147483647',
    );
    expect(gidError(() => parseGidRange({ gidMin: '1999' })).message).toContain('"gidMin"');
    expect(gidError(() => parseGidRange({ gidMax: '-5' })).message).toContain('"gidMax"');
    expect(gidError(() => parseGidRange({ gidMax: '2147483648' })).message).toContain('"gidMax"');
    expect(gidError(() => parseGidRange({ gidMin: '2500.5' })).message).toContain('"gidMin"');
    expect(gidError(() => parseGidRange({ gidMin: '' })).message).toContain('"gidMin"');
  });

  it('reject a gidMin above gidMax', () => {
    expect(gidError(() => parseGidRange({ gidMin: '3001', gidMax: '3000' })).message).toBe(
      'gidMin 3001 is greater than gidMax 3000',
    );
  });
});

describe('GidAllocator', () => {
  it('hands out gidMin first, then the next GIDs, one per PV', async () => {
    const allocator = new GidAllocator({ volumes: new SavedVolumes() });
    const parameters = { gidMin: '3000', gidMax: '3010' };
    const gids = [];
    for (let i = 0; i < 3; i++) gids.push(await allocator.allocateNext(requestFor('gold', parameters)));
    expect(gids).toEqual([3000, 3001, 3002]);
  });

  it('hands out no GID that a saved PV of the class carries', async () => {
    const volumes = new SavedVolumes();
    volumes.save('pv-a', 'gold', 3000);
    volumes.save('pv-b', 'gold', 3002);
    volumes.save('pv-c', 'gold', undefined);
    volumes.save('pv-d', 'gold', 'not-a-gid');
    const allocator = new GidAllocator({ volumes, pageSize: 1 });
    const parameters = { gidMin: '3000', gidMax: '3010' };
    expect(await allocator.allocateNext(requestFor('gold', parameters))).toBe(3001);
    expect(await allocator.allocateNext(requestFor('gold', parameters))).toBe(3003);
  });

  it('reads only the PVs of the claim class: another class may use the same GIDs', async () => {
    const volumes = new SavedVolumes();
    volumes.save('pv-silver', 'silver', 3000);
    volumes.items.push({
      metadata: {
        name: 'pv-beta-annotated',
        annotations: { [annVolumeGid]: '3001', 'volume.beta.kubernetes.io/storage-class': 'gold' },
      },
      spec: { storageClassName: 'silver' },
    });
    const allocator = new GidAllocator({ volumes });
    expect(await allocator.allocateNext(requestFor('gold', { gidMin: '3000' }))).toBe(3000);
    expect(await allocator.allocateNext(requestFor('gold', { gidMin: '3000' }))).toBe(3002);
  });

  it('hands out each GID once to claims provisioned at the same time', async () => {
    const allocator = new GidAllocator({ volumes: new SavedVolumes() });
    const parameters = { gidMin: '3000', gidMax: '3099' };
    const gids = await Promise.all(
      Array.from({ length: 20 }, () => allocator.allocateNext(requestFor('gold', parameters))),
    );
    expect(new Set(gids).size).toBe(20);
  });

  it('gives a retried provision of the same PV the GID it handed out before, or the one its saved PV carries', async () => {
    const volumes = new SavedVolumes();
    const allocator = new GidAllocator({ volumes });
    const request = requestFor('gold', { gidMin: '3000' });
    const first = await allocator.allocateNext(request);
    expect(await allocator.allocateNext(request)).toBe(first);
    volumes.save(request.pvName, 'gold', first);
    expect(await allocator.allocateNext(request)).toBe(first);
    expect(await allocator.allocateNext(requestFor('gold', { gidMin: '3000' }))).toBe(first + 1);
  });

  it('reports a full range with the class and range in the message', async () => {
    const volumes = new SavedVolumes();
    volumes.save('pv-a', 'gold', 3000);
    const allocator = new GidAllocator({ volumes });
    const parameters = { gidMin: '3000', gidMax: '3001' };
    expect(await allocator.allocateNext(requestFor('gold', parameters))).toBe(3001);
    const error = await allocator.allocateNext(requestFor('gold', parameters)).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(RangeAllocatorError);
    expect((error as RangeAllocatorError).kind).toBe('range-full');
    expect((error as Error).message).toContain(
      'every GID from 3000 to 3001 of StorageClass "gold" is in use',
    );
  });

  it('rejects a class with bad gidMin/gidMax before reading any PV', async () => {
    const volumes = new SavedVolumes();
    const allocator = new GidAllocator({ volumes });
    await expect(allocator.allocateNext(requestFor('gold', { gidMax: '12' }))).rejects.toThrow(
      GidParameterError,
    );
    expect(volumes.lists).toBe(0);
  });

  it('frees a released PV GID once its PV object is gone, not before', async () => {
    const volumes = new SavedVolumes();
    const allocator = new GidAllocator({ volumes });
    const parameters = { gidMin: '3000', gidMax: '3001' };
    const request = requestFor('gold', parameters);
    const gid = await allocator.allocateNext(request);
    volumes.save(request.pvName, 'gold', gid);
    const pv = volumes.items[0] as V1PersistentVolume;
    allocator.release(pv);
    expect(await allocator.allocateNext(requestFor('gold', parameters))).toBe(3001);
    volumes.remove(request.pvName);
    expect(await allocator.allocateNext(requestFor('gold', parameters))).toBe(3000);
  });

  it('frees a GID handed out for a PV that was never saved when that PV is released', async () => {
    const allocator = new GidAllocator({ volumes: new SavedVolumes() });
    const parameters = { gidMin: '3000', gidMax: '3000' };
    const request = requestFor('gold', parameters);
    expect(await allocator.allocateNext(request)).toBe(3000);
    allocator.release({ metadata: { name: request.pvName }, spec: { storageClassName: 'gold' } });
    expect(await allocator.allocateNext(requestFor('gold', parameters))).toBe(3000);
  });

  it('frees a GID handed out for a PV the provisioner then makes without one', async () => {
    const allocator = new GidAllocator({ volumes: new SavedVolumes() });
    const parameters = { gidMin: '3000', gidMax: '3000' };
    const request = requestFor('gold', parameters);
    expect(await allocator.allocateNext(request)).toBe(3000);
    allocator.forget(request);
    expect(await allocator.allocateNext(requestFor('gold', parameters))).toBe(3000);
  });

  it('as a new leader, hands out no GID the previous leader got saved, and reuses one it never saved', async () => {
    const volumes = new SavedVolumes();
    const parameters = { gidMin: '3000', gidMax: '3010' };
    const oldLeader = new GidAllocator({ volumes });
    const saved = requestFor('gold', parameters);
    volumes.save(saved.pvName, 'gold', await oldLeader.allocateNext(saved));
    // Killed between allocation and save: 3001 reached no PV.
    expect(await oldLeader.allocateNext(requestFor('gold', parameters))).toBe(3001);
    const newLeader = new GidAllocator({ volumes });
    expect(await newLeader.allocateNext(requestFor('gold', parameters))).toBe(3001);
  });

  it('sees PVs saved by another leader while this replica did not lead', async () => {
    const volumes = new SavedVolumes();
    const parameters = { gidMin: '3000', gidMax: '3010' };
    const replica = new GidAllocator({ volumes });
    const first = requestFor('gold', parameters);
    volumes.save(first.pvName, 'gold', await replica.allocateNext(first));
    // Another replica led meanwhile and saved 3001.
    volumes.save('pv-other-leader', 'gold', 3001);
    expect(await replica.allocateNext(requestFor('gold', parameters))).toBe(3002);
  });

  it('follows a class whose range changed', async () => {
    const volumes = new SavedVolumes();
    volumes.save('pv-a', 'gold', 3000);
    const allocator = new GidAllocator({ volumes });
    expect(await allocator.allocateNext(requestFor('gold', { gidMin: '3000', gidMax: '3010' }))).toBe(3001);
    expect(await allocator.allocateNext(requestFor('gold', { gidMin: '4000', gidMax: '4010' }))).toBe(4000);
  });

  it('fails an allocation when the PVs cannot be read, and the next one goes on', async () => {
    const volumes = new SavedVolumes();
    const allocator = new GidAllocator({ volumes });
    const list = volumes.list.bind(volumes);
    volumes.list = async () => {
      throw new Error('connection refused');
    };
    const parameters = { gidMin: '3000' };
    await expect(allocator.allocateNext(requestFor('gold', parameters))).rejects.toThrow(
      'connection refused',
    );
    volumes.list = list;
    expect(await allocator.allocateNext(requestFor('gold', parameters))).toBe(3000);
  });
});
