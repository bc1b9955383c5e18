/**
 * Where a new volume goes among a node's named roots: the root the class may use with the most room
 * (free space, or unreserved space for enforced sizes), ties to the first name, so a retry or a peer
 * reading the same numbers picks the same root. No root with room: none, and the claim is rescheduled.
 */
import { InfeasibleError } from '@kube-provisioner/controller';

/** A named root of a per-node instance: `--root name=/path`, or `name:label:label=/path`. */
export interface NamedRoot {
  /** The name classes restrict their roots by (parameter `roots`). */
  readonly name: string;
  /** Names the root shares with others (a kind of disk, say), which classes may use as well. */
  readonly labels?: readonly string[] | undefined;
  /** Absolute directory holding the root's volumes. */
  readonly path: string;
}

/** The room a root has for the next volume of a class, in bytes. */
export interface RootRoom {
  readonly name: string;
  readonly roomBytes: number;
}

/** The names a root may have: a DNS label, so it reads well in a class parameter and an event. */
export const rootNamePattern: RegExp = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/u;

/** Whether a class whose `roots` parameter holds `wanted` may use `root`: by its name or a label. */
export function rootWanted(root: Pick<NamedRoot, 'name' | 'labels'>, wanted: ReadonlySet<string>): boolean {
  return wanted.has(root.name) || (root.labels ?? []).some((label) => wanted.has(label));
}

/**
 * The roots of `configured` a class may use: all of them, or those its `roots` parameter names by
 * name or label.
 *
 * @throws InfeasibleError naming the names and labels no root of this node has, and its roots.
 */
export function rootsOfClass<Root extends Pick<NamedRoot, 'name' | 'labels'>>(
  configured: readonly Root[],
  classRoots: readonly string[] | undefined,
): readonly Root[] {
  if (classRoots === undefined) return configured;
  const unknown = classRoots.filter((name) => !configured.some((root) => rootWanted(root, new Set([name]))));
  if (unknown.length > 0) {
    const roots = configured.map((root) =>
      root.labels?.length ? `${root.name} (labels ${root.labels.join(', ')})` : root.name,
    );
    throw new InfeasibleError(
      `parameter "roots" names ${unknown.map((name) => `"${name}"`).join(', ')}, not a root or label of this node: its roots are ${roots.join(', ')}`,
    );
  }
  const wanted = new Set(classRoots);
  return configured.filter((root) => rootWanted(root, wanted));
}

/** The root a new volume of `requestBytes` goes to, or `undefined` when none has room. */
export function chooseRoot<Room extends RootRoom>(
  rooms: readonly Room[],
  requestBytes: number,
): Room | undefined {
  let best: Room | undefined;
  for (const room of rooms) {
    if (room.roomBytes < requestBytes) continue;
    if (
      best === undefined ||
      room.roomBytes > best.roomBytes ||
      (room.roomBytes === best.roomBytes && room.name < best.name)
    ) {
      best = room;
    }
  }
  return best;
}

/** The reschedule message when no root has room: the node and each root's room. */
export function noRootReason(
  rooms: readonly RootRoom[],
  node: string,
  requestBytes: number,
  enforced: boolean,
): string {
  const what = enforced ? 'unreserved by enforced volumes' : 'free';
  const each = rooms.map((room) => `${room.name} ${room.roomBytes}`).join(', ');
  return `node ${node} has no root with ${requestBytes} bytes ${what} for the claim (bytes ${what} per root: ${each}): rescheduling the claim`;
}

/** Whether `path` is `base` or below it; its own root then refuses anything but a volume below it. */
export function isUnder(base: string, path: string): boolean {
  return path === base || path.startsWith(base === '/' ? '/' : `${base}/`);
}

/**
 * @throws Error for no roots, a malformed or repeated name, a malformed label, a label that is
 * another root's name, or a root inside another.
 */
export function checkRoots(roots: readonly NamedRoot[]): void {
  if (roots.length === 0) throw new Error('no root given');
  const names = new Set<string>();
  for (const root of roots) {
    for (const name of [root.name, ...(root.labels ?? [])]) {
      if (!rootNamePattern.test(name)) {
        throw new Error(
          `root name or label ${JSON.stringify(name)} must be lower-case letters, digits and -`,
        );
      }
    }
    const clash = roots.find((other) => other.labels?.includes(root.name));
    // A class naming it would then mean two things.
    if (clash !== undefined) throw new Error(`root name ${root.name} is also a label of root ${clash.name}`);
    if (names.has(root.name)) throw new Error(`root name ${root.name} is given twice`);
    names.add(root.name);
    for (const other of roots) {
      if (other !== root && (other.path === root.path || isUnder(root.path, other.path))) {
        throw new Error(`root ${other.name} (${other.path}) is inside root ${root.name} (${root.path})`);
      }
    }
  }
}
