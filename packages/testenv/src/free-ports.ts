import { createServer, type Server } from 'node:net';

/**
 * Distinct loopback ports that were free a moment ago. All are held open at once so they differ;
 * another process may still take one before a component binds it, so callers retry on conflicts.
 */
export async function freePorts(count: number): Promise<number[]> {
  const servers: Server[] = [];
  try {
    const ports: number[] = [];
    for (let i = 0; i < count; i++) {
      const server = createServer();
      servers.push(server);
      ports.push(
        await new Promise<number>((resolve, reject) => {
          server.once('error', reject);
          server.listen(0, '127.0.0.1', () => {
            const address = server.address();
            if (address && typeof address === 'object') resolve(address.port);
            else reject(new Error('no port assigned'));
          });
        }),
      );
    }
    return ports;
  } finally {
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  }
}
