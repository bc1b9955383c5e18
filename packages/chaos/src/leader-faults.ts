/**
 * Faults aimed at the current leader of a target: SIGKILL (a crashed pod), or SIGSTOP for longer
 * than the lease duration and SIGCONT (a frozen node or a long pause). Each records how long the
 * target took to have a leader with a started controller again.
 */
import { waitFor } from '@kube-provisioner/testenv';
import type { LeaseTracker } from './lease-tracker.ts';
import type { Incarnation, ReplicaSet } from './replica-set.ts';
import type { SeededRandom } from './seeded-random.ts';

/** One fault and the recovery after it. */
export interface LeaderFault {
  readonly signal: 'SIGKILL' | 'SIGSTOP';
  /**
   * `nested`: the nested-render phase (see `nested-renders.ts`); `resize`: see `resize-under-kill.ts`;
   * `sweep`, `take-back`, `clone`, `hostile-tenant`: see `archive-expiry-under-kill.ts`,
   * `take-back-under-kill.ts`, `clone-under-kill.ts`, `hostile-tenant.ts`; `snapshot`, `restore`:
   * see `snapshot-under-kill.ts`.
   */
  readonly phase:
    | 'create'
    | 'delete'
    | 'nested'
    | 'resize'
    | 'sweep'
    | 'take-back'
    | 'clone'
    | 'hostile-tenant'
    | 'snapshot'
    | 'restore';
  /** ms since the epoch. */
  readonly atMs: number;
  readonly victim: string;
  /** From the fault to the next "Started provisioner controller" of any replica. */
  recoveryMs: number | undefined;
}

const leaderTimeoutMs = 120_000;

/** The live incarnation holding the Lease, once there is one. */
export async function currentLeader(replicas: ReplicaSet, lease: LeaseTracker): Promise<Incarnation> {
  return waitFor(
    () => {
      const holder = lease.holder();
      return holder === undefined ? undefined : replicas.byIdentity(holder);
    },
    { timeoutMs: leaderTimeoutMs, intervalMs: 100, description: `a leader of ${replicas.name}` },
  );
}

async function awaitRecovery(replicas: ReplicaSet, fault: LeaderFault): Promise<void> {
  const started = await waitFor(() => replicas.startsAfter(fault.atMs)[0], {
    timeoutMs: leaderTimeoutMs,
    intervalMs: 100,
    description: `${replicas.name} to lead again after ${fault.signal} of ${fault.victim}`,
  });
  fault.recoveryMs = started - fault.atMs;
}

/** SIGKILLs the leader's process group and waits until a replica leads again. */
export async function killLeader(
  replicas: ReplicaSet,
  lease: LeaseTracker,
  phase: LeaderFault['phase'],
): Promise<LeaderFault> {
  const leader = await currentLeader(replicas, lease);
  const fault: LeaderFault = {
    signal: 'SIGKILL',
    phase,
    atMs: Date.now(),
    victim: leader.identity ?? '',
    recoveryMs: undefined,
  };
  process.kill(-leader.program.pid, 'SIGKILL');
  await awaitRecovery(replicas, fault);
  return fault;
}

/**
 * SIGSTOPs the leader for `pauseMs` (longer than the lease duration, so the standby takes over
 * meanwhile), then SIGCONTs it and waits until a replica leads.
 */
export async function pauseLeader(
  replicas: ReplicaSet,
  lease: LeaseTracker,
  phase: LeaderFault['phase'],
  pauseMs: number,
): Promise<LeaderFault> {
  const leader = await currentLeader(replicas, lease);
  const fault: LeaderFault = {
    signal: 'SIGSTOP',
    phase,
    atMs: Date.now(),
    victim: leader.identity ?? '',
    recoveryMs: undefined,
  };
  process.kill(-leader.program.pid, 'SIGSTOP');
  try {
    // The pause is the fault itself, not a wait for something.
    await new Promise((resolve) => setTimeout(resolve, pauseMs));
  } finally {
    leader.resumed(Date.now());
    process.kill(-leader.program.pid, 'SIGCONT');
  }
  await awaitRecovery(replicas, fault);
  return fault;
}

/**
 * Runs `step` while the leader is SIGKILLed at a random moment up to `maxDelayMs` after it starts;
 * resolves with the fault once both are over.
 */
export async function killLeaderDuring(
  step: () => Promise<unknown>,
  options: {
    readonly replicas: ReplicaSet;
    readonly lease: LeaseTracker;
    readonly phase: LeaderFault['phase'];
    readonly random: SeededRandom;
    readonly maxDelayMs: number;
  },
): Promise<LeaderFault> {
  const delayMs = options.random.integer(0, options.maxDelayMs);
  const strike = (async () => {
    // The delay is the random moment of the fault; nothing waits on it.
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    return killLeader(options.replicas, options.lease, options.phase);
  })();
  const [, fault] = await Promise.all([step(), strike]);
  return fault;
}

/** A kill aimed at a moment of the work seen from outside, and whether that moment came. */
export interface AimedFault {
  readonly fault: LeaderFault;
  /** Whether the condition held when the leader was killed, rather than the wait running out. */
  readonly aimed: boolean;
}

/**
 * SIGKILLs the leader as soon as `condition` holds (polled every 50 ms), or once `timeoutMs` has
 * passed without it, and waits until a replica leads again.
 */
export async function killLeaderWhen(
  condition: () => Promise<boolean>,
  options: {
    readonly replicas: ReplicaSet;
    readonly lease: LeaseTracker;
    readonly phase: LeaderFault['phase'];
    readonly timeoutMs: number;
  },
): Promise<AimedFault> {
  const aimed = await waitFor(condition, {
    timeoutMs: options.timeoutMs,
    intervalMs: 50,
    description: `the moment to kill the leader of ${options.replicas.name}`,
  }).then(
    () => true,
    () => false,
  );
  return { fault: await killLeader(options.replicas, options.lease, options.phase), aimed };
}
