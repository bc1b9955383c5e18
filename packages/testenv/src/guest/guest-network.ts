/**
 * The guest's private network: a network namespace of its own, held by a forwarder process started
 * in it with `unshare --net`, with a tap device whose far end is the guest's `vec0`. Nothing of the
 * host's network is visible to the guest; what it may reach is forwarded explicitly, through unix
 * sockets (files, so reachable from both namespaces) to a second forwarder in the host's namespace:
 *
 *   guest ─tap─▶ forwarder in the namespace ─unix socket─▶ forwarder on the host ─▶ 127.0.0.1:port
 *
 * and back the same way for the host reaching the guest's agent.
 */
import { join } from 'node:path';
import { runCommand } from '../command.ts';
import type { ForwarderEndpoint } from './forwarder.ts';
import { type ForwarderProcess, startForwarder } from './forwarder-process.ts';
import { agentPort, gatewayAddress, guestAddress, linkPrefix } from './guest-init.ts';

/** Name of the tap device inside the namespace. */
export const tapDevice = 'tap0';

/** The namespace, its tap device and both forwarders. */
export interface GuestNetwork {
  /** The namespace's forwarder; `nsenter --net=/proc/<pid>/ns/net` enters the namespace. */
  readonly inside: ForwarderProcess;
  /** The host's forwarder. */
  readonly outside: ForwarderProcess;
  /** The unix socket through which the host reaches the guest's agent. */
  readonly agentSocket: string;
  /** A command line prefix that runs a program inside the namespace. */
  readonly enter: readonly string[];
  /**
   * Makes `127.0.0.1:hostPort` of the host reachable from inside as `address:listenPort`, adding
   * `address` to the tap device when it is new; `key` names the route and its unix socket.
   */
  exposeHostPort(key: string, address: string, listenPort: number, hostPort: number): Promise<void>;
  /** Points an exposed address at another host port (new connections only). */
  retargetHostPort(key: string, hostPort: number): Promise<void>;
  /** Cuts an exposed address: new connections are refused, open ones closed. */
  cutHostPort(key: string): Promise<void>;
  /** Stops both forwarders; the namespace and its tap device go with the first. */
  stop(): Promise<void>;
}

/**
 * Makes the namespace and its tap device, then the forwarders' standing routes: the agent's socket.
 * `dir` holds the unix sockets; `onOutput` receives the forwarders' diagnostics.
 */
export async function startGuestNetwork(
  dir: string,
  onOutput: (text: string) => void,
): Promise<GuestNetwork> {
  const inside = await startForwarder({ launcher: ['unshare', '--net', '--'], onOutput });
  const outside = await startForwarder({ onOutput }).catch(async (err: unknown) => {
    await inside.stop();
    throw err;
  });
  const enter = ['nsenter', `--net=/proc/${inside.pid}/ns/net`, '--'];
  const ip = (...args: string[]) => runCommand(enter[0] ?? 'nsenter', [...enter.slice(1), 'ip', ...args]);
  const exposed = new Map<string, { inside: ForwarderEndpoint; outside: ForwarderEndpoint }>();
  const addresses = new Set([gatewayAddress]);
  const agentSocket = join(dir, 'agent.sock');
  try {
    await ip('link', 'set', 'lo', 'up');
    await ip('tuntap', 'add', 'dev', tapDevice, 'mode', 'tap');
    await ip('addr', 'add', `${gatewayAddress}/${linkPrefix}`, 'dev', tapDevice);
    await ip('link', 'set', tapDevice, 'up');
    await inside.listen({ path: agentSocket }, { host: guestAddress, port: agentPort });
  } catch (err) {
    await Promise.all([inside.stop(), outside.stop()]);
    throw err;
  }
  return {
    inside,
    outside,
    agentSocket,
    enter,
    async exposeHostPort(key, address, listenPort, hostPort) {
      if (exposed.has(key)) throw new Error(`${key} is already exposed`);
      const socket = { path: join(dir, `${key}.sock`) };
      const listenAt = { host: address, port: listenPort };
      if (!addresses.has(address)) {
        await ip('addr', 'add', `${address}/${linkPrefix}`, 'dev', tapDevice);
        addresses.add(address);
      }
      await outside.listen(socket, { host: '127.0.0.1', port: hostPort });
      await inside.listen(listenAt, socket);
      exposed.set(key, { inside: listenAt, outside: socket });
    },
    async retargetHostPort(key, hostPort) {
      const route = exposed.get(key);
      if (route === undefined) throw new Error(`${key} is not exposed`);
      await outside.retarget(route.outside, { host: '127.0.0.1', port: hostPort });
    },
    async cutHostPort(key) {
      const route = exposed.get(key);
      if (route === undefined) return;
      exposed.delete(key);
      await inside.close(route.inside);
      await outside.close(route.outside);
    },
    async stop() {
      await Promise.all([inside.stop(), outside.stop()]);
    },
  };
}
