/**
 * The NFS test server against the real nfs-ganesha and libnfs: what a client writes over NFS lands
 * in the exported directory on disk, and the other way round.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { listNfsDirectory, readNfsFile, writeNfsFile } from '../src/libnfs.ts';
import { type NfsServer, startNfsServer } from '../src/nfs-server.ts';
import { isProcessAlive } from '../src/process-group.ts';
import { nfsToolsAvailable } from '../src/testing.ts';

async function withServer(exportPath: string, body: (server: NfsServer) => Promise<void>): Promise<void> {
  const server = await startNfsServer({ exportPath });
  try {
    await body(server);
  } finally {
    await server.stop();
  }
}

describe.skipIf(!nfsToolsAvailable())('NFS test server', () => {
  it('serves the export directory under its NFSv4 path', async () => {
    await withServer('/export', async (server) => {
      await mkdir(join(server.exportDir, 'ns-claim'));
      await writeFile(join(server.exportDir, 'ns-claim', 'from-disk.txt'), 'written on disk\n');

      expect(await listNfsDirectory(server.location('/export'))).toEqual(['ns-claim']);
      expect(await readNfsFile(server.location('/export/ns-claim/from-disk.txt'))).toBe('written on disk\n');

      await writeNfsFile(server.location('/export/ns-claim/from-nfs.txt'), 'written over NFS\n');
      expect(await readFile(join(server.exportDir, 'ns-claim', 'from-nfs.txt'), 'utf8')).toBe(
        'written over NFS\n',
      );
    });
  });

  it('puts the export at the server root for exportPath /', async () => {
    await withServer('/', async (server) => {
      expect(server.exportPath).toBe('/');
      await writeNfsFile(server.location('/at-root.txt'), 'root\n');
      expect(await readFile(join(server.exportDir, 'at-root.txt'), 'utf8')).toBe('root\n');
    });
  });

  it('normalises the export path it is given', async () => {
    await withServer('export//sub/', async (server) => {
      expect(server.exportPath).toBe('/export/sub');
      expect(await listNfsDirectory(server.location('/export/sub'))).toEqual([]);
    });
  });

  it('runs several servers at once on distinct ports', async () => {
    const [a, b] = await Promise.all([startNfsServer(), startNfsServer()]);
    try {
      expect(a?.port).not.toBe(b?.port);
      if (!a || !b) throw new Error('a server did not start');
      await writeNfsFile(a.location('/export/which.txt'), 'a');
      await writeNfsFile(b.location('/export/which.txt'), 'b');
      expect(await readFile(join(a.exportDir, 'which.txt'), 'utf8')).toBe('a');
      expect(await readFile(join(b.exportDir, 'which.txt'), 'utf8')).toBe('b');
    } finally {
      await Promise.all([a?.stop(), b?.stop()]);
    }
  });

  it('stops ganesha and removes its state on stop', async () => {
    const server = await startNfsServer();
    const pid = Number(await readFile(join(server.dir, 'pids', 'ganesha.pid'), 'utf8'));
    expect(isProcessAlive(pid)).toBe(true);
    await server.stop();
    expect(isProcessAlive(pid)).toBe(false);
    expect(existsSync(server.dir)).toBe(false);
    await expect(readNfsFile(server.location('/export/x'))).rejects.toThrow(/nfs-cat/u);
  });
});
