/**
 * A TCP proxy in front of the API server that can black-hole its open connections: they stay open
 * but nothing passes either way any more, as when a NAT entry or a firewall state drops a long-lived
 * connection without a reset. Connections opened afterwards are forwarded normally.
 */
import { connect, createServer, type Socket } from 'node:net';

/** A running proxy. */
export interface TcpProxy {
  /** `host:port` clients connect to. */
  readonly address: string;
  /** Connections accepted so far. */
  readonly accepted: number;
  /** Stops forwarding on every open connection without closing it; returns how many were cut. */
  blackHole(): number;
  close(): Promise<void>;
}

/** Starts a proxy on 127.0.0.1 (a free port) forwarding to `target` (`host:port`). */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const open = new Set<{ client: Socket; upstream: Socket; cut: boolean }>();
  let accepted = 0;
  const server = createServer((client) => {
    accepted += 1;
    const upstream = connect(target.port, target.host);
    const pair = { client, upstream, cut: false };
    open.add(pair);
    client.pipe(upstream);
    upstream.pipe(client);
    const end = (): void => {
      open.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    address: `127.0.0.1:${port}`,
    get accepted() {
      return accepted;
    },
    blackHole() {
      let count = 0;
      for (const pair of open) {
        if (pair.cut) continue;
        pair.cut = true;
        count += 1;
        pair.client.unpipe(pair.upstream);
        pair.upstream.unpipe(pair.client);
        // Paused sockets read nothing more: the peers' data waits in kernel buffers, unread, as
        // data sent into a black hole. Neither peer sees the connection end.
        pair.client.pause();
        pair.upstream.pause();
      }
      return count;
    },
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const { client, upstream } of open) {
          client.destroy();
          upstream.destroy();
        }
      });
    },
  };
}
