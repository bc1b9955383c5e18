/** The test guest's parts that need neither root nor a kernel: cache key, prerequisites, forwarder, mountstats. */
import { readFileSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startForwarder } from '../src/guest/forwarder-process.ts';
import { guestImageKey } from '../src/guest/guest-image.ts';
import { bootModules, imageFiles, initScript } from '../src/guest/guest-init.ts';
import { guestAptPackages, missingGuestPackages } from '../src/guest/guest-prerequisites.ts';
import { parseNfsMountStats } from '../src/guest/nfs-mount-stats.ts';
import { temporaryDir } from './support/temporary-dir.ts';

describe('guestImageKey', () => {
  it('names the kernel package, Node.js and suite, and changes with either', () => {
    const key = guestImageKey('6.1um4+b13', '24.21.0');
    expect(key).toMatch(/^uml-6\.1um4_b13-node-24\.21\.0-bookworm-[0-9a-f]{10}$/u);
    expect(guestImageKey('6.1um5', '24.21.0')).not.toBe(key);
    expect(guestImageKey('6.1um4+b13', '24.22.0')).not.toBe(key);
    expect(guestImageKey('6.1um4+b13', '24.21.0')).toBe(key);
  });
});

describe('the init script', () => {
  it('loads the modules tests need and leaves the guest no name service to wait for', () => {
    expect(initScript).toContain(`modprobe -a ${bootModules.join(' ')}`);
    expect(bootModules).toEqual(expect.arrayContaining(['nfsv4', 'quota_v2', 'loop']));
    expect(imageFiles['/etc/resolv.conf']).not.toMatch(/nameserver/u);
  });
});

describe('missingGuestPackages', () => {
  it('names every package whose programs are not on PATH, once each', () => {
    expect(missingGuestPackages('')).toEqual(guestAptPackages);
    expect(guestAptPackages).toEqual(expect.arrayContaining(['util-linux', 'iproute2', 'mmdebstrap']));
  });
});

describe('the forwarder', () => {
  const servers: Server[] = [];
  const stops: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const stop of stops.splice(0)) await stop();
    for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
  });

  /** A TCP server on loopback answering every connection with `tag` and the bytes it got. */
  async function taggedEcho(tag: string): Promise<number> {
    const server = createServer((socket) => socket.on('data', (data) => socket.end(`${tag}:${data}`)));
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    return address.port;
  }

  function ask(path: string, text: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = connect(path, () => socket.write(text));
      let answer = '';
      socket.on('data', (data) => {
        answer += data;
      });
      socket.on('end', () => resolve(answer));
      socket.on('error', reject);
    });
  }

  it('carries bytes from a unix socket to TCP, follows a retarget and stops on close', async () => {
    const dir = await temporaryDir('forwarder-');
    const forwarder = await startForwarder({});
    stops.push(() => forwarder.stop());
    const socket = { path: join(dir, 'api.sock') };
    const [first, second] = [await taggedEcho('first'), await taggedEcho('second')];

    await forwarder.listen(socket, { host: '127.0.0.1', port: first });
    expect(await ask(socket.path, 'hello')).toBe('first:hello');
    await forwarder.retarget(socket, { host: '127.0.0.1', port: second });
    expect(await ask(socket.path, 'again')).toBe('second:again');
    await forwarder.close(socket);
    await expect(ask(socket.path, 'gone')).rejects.toThrow(/ENOENT|ECONNREFUSED/u);
  });

  it('answers a bad request with an error and keeps serving', async () => {
    const dir = await temporaryDir('forwarder-');
    const forwarder = await startForwarder({});
    stops.push(() => forwarder.stop());
    const socket = { path: join(dir, 'one.sock') };
    await forwarder.listen(socket, { host: '127.0.0.1', port: await taggedEcho('x') });
    await expect(forwarder.listen(socket, { host: '127.0.0.1', port: 1 })).rejects.toThrow(
      /already listening/u,
    );
    await expect(forwarder.retarget({ path: join(dir, 'none.sock') }, socket)).rejects.toThrow(
      /not listening/u,
    );
    expect(await ask(socket.path, 'still')).toBe('x:still');
  });
});

describe('parseNfsMountStats', () => {
  const text = readFileSync(join(import.meta.dirname, 'fixtures', 'guest-mountstats.txt'), 'utf8');

  it("counts the operations of one mount's per-op statistics, leaving unused ones out", () => {
    const stats = parseNfsMountStats(text, '/mnt/a');
    expect(stats.WRITE).toEqual({
      operations: 1,
      transmissions: 1,
      majorTimeouts: 0,
      bytesSent: 208,
      bytesReceived: 184,
      queueMs: 0,
      rttMs: 1,
      executeMs: 1,
      errors: 0,
    });
    expect(stats.ACCESS?.operations).toBe(3);
    expect(stats.READ).toBeUndefined();
  });

  it('refuses a mount point that is not an NFS mount', () => {
    expect(() => parseNfsMountStats(text, '/scratch')).toThrow('no NFS mount at /scratch');
  });
});
