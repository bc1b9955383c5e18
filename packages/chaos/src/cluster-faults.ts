/**
 * Control-plane faults at seeded random moments: one kube-apiserver restart, one etcd compaction and
 * one kube-controller-manager restart, through the testenv fault hooks.
 */
import type { ControlPlane } from '@kube-provisioner/testenv';
import type { SeededRandom } from './seeded-random.ts';

/** One control-plane fault. */
export interface ClusterFault {
  readonly fault: 'restart kube-apiserver' | 'compact etcd' | 'restart kube-controller-manager';
  /** ms since the epoch. */
  readonly atMs: number;
  readonly durationMs: number;
}

/**
 * Runs the three faults in turn, each after a random delay of `minDelayMs`–`maxDelayMs` from the
 * end of the one before.
 */
export async function runClusterFaults(
  controlPlane: ControlPlane,
  random: SeededRandom,
  minDelayMs: number,
  maxDelayMs: number,
): Promise<ClusterFault[]> {
  const faults: [ClusterFault['fault'], () => Promise<unknown>][] = [
    ['restart kube-apiserver', () => controlPlane.restartComponent('kube-apiserver')],
    ['compact etcd', () => controlPlane.compactEtcd()],
    ['restart kube-controller-manager', () => controlPlane.restartComponent('kube-controller-manager')],
  ];
  const done: ClusterFault[] = [];
  for (const [fault, inject] of faults) {
    // The delay picks the random moment of the fault; nothing waits on it.
    await new Promise((resolve) => setTimeout(resolve, random.integer(minDelayMs, maxDelayMs)));
    const atMs = Date.now();
    await inject();
    done.push({ fault, atMs, durationMs: Date.now() - atMs });
  }
  return done;
}
