/**
 * The kernel NFS client's per-operation counters of one mount, from `/proc/self/mountstats` in the
 * guest: how many RPCs of each kind (LOOKUP, CREATE, WRITE…) a program caused, which is what to
 * compare under User-Mode Linux, where wall-clock times say little.
 */
import type { Guest } from './guest.ts';

/** Counters of one NFS operation (the "per-op statistics" of `mountstats`, statvers 1.1). */
export interface NfsOperationStats {
  /** Requests made. */
  readonly operations: number;
  /** Transmissions, retransmissions included. */
  readonly transmissions: number;
  readonly majorTimeouts: number;
  readonly bytesSent: number;
  readonly bytesReceived: number;
  /** Cumulative milliseconds queued, waiting for replies, and in all. */
  readonly queueMs: number;
  readonly rttMs: number;
  readonly executeMs: number;
  /** Replies with an error status (kernels from 5.x). */
  readonly errors: number;
}

/**
 * The per-operation counters of the mount at `mountPoint` in a `mountstats` text; operations never
 * used are left out. Throws when no NFS mount is there.
 */
export function parseNfsMountStats(text: string, mountPoint: string): Record<string, NfsOperationStats> {
  const devices = text.split(/^(?=device )/mu);
  const block = devices.find((device) => {
    const header = /^device \S+ mounted on (\S+) with fstype (nfs4?)\b/u.exec(device);
    return header?.[1] === mountPoint;
  });
  if (block === undefined) throw new Error(`no NFS mount at ${mountPoint} in mountstats`);
  const perOp = block.slice(block.indexOf('per-op statistics'));
  const result: Record<string, NfsOperationStats> = {};
  for (const match of perOp.matchAll(/^\s+([A-Z_0-9]+):((?:\s+\d+){8,9})\s*$/gmu)) {
    const [name = '', counters = ''] = [match[1], match[2]];
    const [
      operations = 0,
      transmissions = 0,
      majorTimeouts = 0,
      bytesSent = 0,
      bytesReceived = 0,
      queueMs = 0,
      rttMs = 0,
      executeMs = 0,
      errors = 0,
    ] = counters.trim().split(/\s+/u).map(Number);
    if (operations === 0) continue;
    result[name] = {
      operations,
      transmissions,
      majorTimeouts,
      bytesSent,
      bytesReceived,
      queueMs,
      rttMs,
      executeMs,
      errors,
    };
  }
  return result;
}

/** The per-operation counters of the NFS mount at `mountPoint` inside `guest`, read now. */
export async function nfsMountStats(
  guest: Guest,
  mountPoint: string,
): Promise<Record<string, NfsOperationStats>> {
  return parseNfsMountStats(await guest.sh('cat /proc/self/mountstats'), mountPoint);
}
