/**
 * The test guest end to end: a User-Mode Linux kernel booted from the cached image, running
 * programs, mounting a test nfs-ganesha export with the kernel NFS client, reaching the control
 * plane's API server, and offering XFS and ext4 project quotas.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { guestUser } from '../src/guest/guest-init.ts';
import { mountNfs } from '../src/guest/guest-nfs-mount.ts';
import { createQuotaFileSystem } from '../src/guest/guest-quota.ts';
import { nfsMountStats } from '../src/guest/nfs-mount-stats.ts';
import { startNfsServer } from '../src/nfs-server.ts';
import { guestAvailable, nfsToolsAvailable, useGuest, useTestEnv } from '../src/testing.ts';

const env = useTestEnv();
const guest = useGuest();
const writer = { uid: guestUser.uid, gid: guestUser.gid };

describe.skipIf(!guestAvailable())('the test guest', () => {
  it('runs programs with their exit status, output, standard input and user', async () => {
    const vm = await guest();
    const result = await vm.run(
      ['sh', '-c', 'read line; echo "$line from $(id -u)"; echo oops >&2; exit 3'],
      {
        stdin: 'hello\n',
        user: writer,
      },
    );
    expect(result).toEqual({ status: 3, signal: null, stdout: 'hello from 1000\n', stderr: 'oops\n' });
    expect((await vm.sh('uname -r')).trim()).toBe(vm.image.kernelRelease);
    expect((await vm.sh('node --version')).trim()).toBe(`v${vm.image.nodeVersion}`);
  });

  it('stops a long-running program through its process group', async () => {
    const vm = await guest();
    const program = await vm.spawn(['sh', '-c', 'echo started; exec sleep 600']);
    await program.waitForOutput(/started/u);
    expect(await program.stop()).toBe(null);
    expect(program.exitSignal()).toBe('SIGTERM');
  });

  it('shares a host directory both ways', async () => {
    const vm = await guest();
    await writeFile(join(vm.shareDir, 'from-host.txt'), 'host\n');
    await vm.sh('cat "$1/from-host.txt" > "$1/from-guest.txt"', { args: [vm.shareMount] });
    expect(await readFile(join(vm.shareDir, 'from-guest.txt'), 'utf8')).toBe('host\n');
  });

  it("reaches the host's API server under the kubeconfig's own URL", async () => {
    const vm = await guest();
    const kubeconfig = await vm.kubeconfig(env.kubeconfigPath);
    // The admin kubeconfig is JSON with inline certificates: enough for Node's https client.
    const script = `
      const config = JSON.parse(require('node:fs').readFileSync(process.argv[1], 'utf8'));
      const data = (value) => Buffer.from(value, 'base64');
      const cluster = config.clusters[0].cluster, user = config.users[0].user;
      require('node:https').get(cluster.server + '/version', {
        ca: data(cluster['certificate-authority-data']),
        cert: data(user['client-certificate-data']),
        key: data(user['client-key-data']),
      }, (response) => { let body = ''; response.on('data', (d) => (body += d)); response.on('end', () => console.log(body)); });
    `;
    const version = JSON.parse(await vm.sh('node -e "$1" "$2"', { args: [script, kubeconfig] })) as {
      gitVersion: string;
    };
    expect(version.gitVersion).toMatch(/^v1\.\d+\.\d+/u);
  });

  describe.skipIf(!nfsToolsAvailable())('with a test NFS server', () => {
    it('mounts the export with the kernel NFS client at port 2049 and counts its operations', async () => {
      const vm = await guest();
      const server = await startNfsServer();
      try {
        const endpoint = await vm.exposeNfsServer(server);
        expect(endpoint.port).toBe(2049);
        const mount = await mountNfs(vm, { server: endpoint.address, path: server.exportPath });
        await vm.sh('mkdir "$1/dir" && echo kernel > "$1/dir/file" && sync', { args: [mount.mountPoint] });
        expect(await readFile(join(server.exportDir, 'dir', 'file'), 'utf8')).toBe('kernel\n');
        const stats = await nfsMountStats(vm, mount.mountPoint);
        // NFSv4 makes directories with CREATE (and files with OPEN).
        expect(stats.CREATE?.operations).toBe(1);
        expect(stats.WRITE?.bytesSent).toBeGreaterThan(0);
        await mount.unmount();
      } finally {
        await server.stop();
      }
    });
  });

  it.each([
    ['xfs', /No space left on device/u],
    ['ext4', /Disk quota exceeded/u],
  ] as const)('limits a project directory on %s, which statfs reports as its size', async (type, refusal) => {
    const vm = await guest();
    const fileSystem = await createQuotaFileSystem(vm, { type });
    try {
      await fileSystem.limitProject('volume', 42, 10, writer);
      expect((await fileSystem.space('volume')).sizeBytes).toBe(10 * 1024 * 1024);
      const write = await vm.run(
        [
          'sh',
          '-c',
          'dd if=/dev/zero of="$1/volume/big" bs=1M count=20 conv=fsync status=none',
          'sh',
          fileSystem.mountPoint,
        ],
        { user: writer },
      );
      expect(write.status).not.toBe(0);
      expect(write.stderr).toMatch(refusal);
      const { usedBytes } = await fileSystem.space('volume');
      expect(usedBytes).toBeLessThanOrEqual(10 * 1024 * 1024);
      expect(usedBytes).toBeGreaterThan(9 * 1024 * 1024);
    } finally {
      await fileSystem.remove();
    }
  });
});
