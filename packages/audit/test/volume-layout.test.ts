import type { V1PersistentVolume } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { locateVolume } from '../src/volume-layout.ts';

const nfs = (server: string, path: string): V1PersistentVolume => ({ spec: { nfs: { server, path } } });

describe('locateVolume', () => {
  it('maps spec.nfs.path below the export path, by whole segments', () => {
    const layout = { kind: 'nfs', exportPath: '/export' } as const;
    expect(locateVolume(layout, nfs('s', '/export/ns/data'))).toEqual({ kind: 'path', path: 'ns/data' });
    expect(locateVolume(layout, nfs('s', '/exports/x')).kind).toBe('elsewhere');
    expect(locateVolume(layout, nfs('s', '/export')).kind).toBe('elsewhere');
    expect(locateVolume(layout, nfs('s', '/export/a/../b')).kind).toBe('elsewhere');
  });

  it('works with NFS_PATH / and checks the server when given', () => {
    expect(locateVolume({ kind: 'nfs', exportPath: '/' }, nfs('s', '/a'))).toEqual({
      kind: 'path',
      path: 'a',
    });
    expect(locateVolume({ kind: 'nfs', exportPath: '/', server: 'other' }, nfs('s', '/a'))).toEqual({
      kind: 'elsewhere',
      reason: 'it is on NFS server "s", not "other"',
    });
  });

  it('maps hostPath and local paths below the host root, and refuses other sources', () => {
    const layout = { kind: 'hostpath', hostRoot: '/var/lib/hp' } as const;
    expect(locateVolume(layout, { spec: { hostPath: { path: '/var/lib/hp/pvc-1' } } })).toEqual({
      kind: 'path',
      path: 'pvc-1',
    });
    expect(locateVolume(layout, { spec: { local: { path: '/var/lib/hp/a/b' } } })).toEqual({
      kind: 'path',
      path: 'a/b',
    });
    expect(locateVolume(layout, nfs('s', '/var/lib/hp/x')).kind).toBe('elsewhere');
  });
});
