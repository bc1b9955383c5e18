/**
 * The single-leader check: every side effect a replica logs must fall inside its own tenure of the
 * Lease. Tenures come from the Lease itself (`holderIdentity` and `acquireTime`, written by the
 * acquirer); work lines from each replica's own log. A work line is logged after its side effect,
 * so a line inside the replica's tenure can still hide an effect that began just before it; the
 * fencing guarantee (no effect once the replica's own view of its lease is older than the renew
 * deadline, which is shorter than the lease duration a successor waits) leaves nothing to tolerate
 * in the other direction: a line stamped after a successor acquired is an overlap.
 */

/** One holder's tenure, from the moment it acquired the Lease. */
export interface LeaseTenure {
  readonly holder: string;
  /** `spec.acquireTime`, ms since the epoch. */
  readonly acquiredAtMs: number;
}

/** A side effect logged by a replica. */
export interface WorkLine {
  /** The replica's leader identity, or `undefined` when it never logged one (it never led). */
  readonly identity: string | undefined;
  /** The log line's `time`, ms since the epoch. */
  readonly atMs: number;
  readonly msg: string;
}

/** A work line logged while the replica did not hold the Lease. */
export interface Overlap extends WorkLine {
  /** Who held the Lease at that moment; `undefined` before the first tenure. */
  readonly holder: string | undefined;
}

/** The work lines of `lines` that lie outside their replica's tenures. */
export function findOverlaps(tenures: readonly LeaseTenure[], lines: readonly WorkLine[]): Overlap[] {
  const ordered = [...tenures].sort((a, b) => a.acquiredAtMs - b.acquiredAtMs);
  const holderAt = (atMs: number): string | undefined => {
    let holder: string | undefined;
    for (const tenure of ordered) {
      if (tenure.acquiredAtMs > atMs) break;
      holder = tenure.holder;
    }
    return holder;
  };
  return lines.flatMap((line) => {
    const holder = holderAt(line.atMs);
    return line.identity !== undefined && holder === line.identity ? [] : [{ ...line, holder }];
  });
}

/** The windows (first and last line) of overlapping work per replica, for the report. */
export function overlapWindows(
  overlaps: readonly Overlap[],
): { identity: string; lines: number; fromMs: number; toMs: number }[] {
  const byIdentity = new Map<string, { identity: string; lines: number; fromMs: number; toMs: number }>();
  for (const overlap of overlaps) {
    const identity = overlap.identity ?? '(never led)';
    const window = byIdentity.get(identity);
    if (window === undefined) {
      byIdentity.set(identity, { identity, lines: 1, fromMs: overlap.atMs, toMs: overlap.atMs });
    } else {
      window.lines += 1;
      window.fromMs = Math.min(window.fromMs, overlap.atMs);
      window.toMs = Math.max(window.toMs, overlap.atMs);
    }
  }
  return [...byIdentity.values()];
}
