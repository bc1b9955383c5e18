import { describe, expect, it } from 'vitest';
import { nfsUrl } from '../src/libnfs.ts';

describe('libnfs URLs', () => {
  it('carry the port as nfsport and ask for NFSv4', () => {
    expect(nfsUrl({ server: '127.0.0.1', port: 20_490, path: '/export/ns-claim-pvc-1' })).toBe(
      'nfs://127.0.0.1/export/ns-claim-pvc-1?version=4&nfsport=20490',
    );
  });

  it('address the server root', () => {
    expect(nfsUrl({ server: '127.0.0.1', port: 2049, path: '/' })).toBe(
      'nfs://127.0.0.1/?version=4&nfsport=2049',
    );
  });

  it('double the slash of a file directly under the root, which libnfs would otherwise not mount', () => {
    expect(nfsUrl({ server: '127.0.0.1', port: 2049, path: '/file.txt' })).toBe(
      'nfs://127.0.0.1//file.txt?version=4&nfsport=2049',
    );
  });

  it('refuse relative paths and characters libnfs would misread', () => {
    expect(() => nfsUrl({ server: 'h', port: 1, path: 'export' })).toThrow(/absolute/u);
    for (const path of ['/a b', '/a?b', '/a#b', '/a%20b']) {
      expect(() => nfsUrl({ server: 'h', port: 1, path })).toThrow(/libnfs URL/u);
    }
  });
});
