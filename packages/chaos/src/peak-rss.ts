/**
 * The peak resident memory of a replica set's live processes, sampled from `/proc`: what a
 * container's memory limit would have judged.
 */
import { readFile } from 'node:fs/promises';
import type { ReplicaSet } from './replica-set.ts';

/** Sampling that runs until stopped. */
export interface RssSampler {
  /** Stops sampling; the highest resident set of any one process seen, in MiB. */
  stop(): number;
}

const sampleEveryMs = 200;

async function residentKiB(pid: number): Promise<number | undefined> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => undefined);
  const match = status === undefined ? null : /^VmRSS:\s+(\d+) kB$/mu.exec(status);
  return match?.[1] === undefined ? undefined : Number(match[1]);
}

/** Samples every live incarnation of `replicas` every 200 ms. */
export function sampleRss(replicas: ReplicaSet): RssSampler {
  let peakKiB = 0;
  const timer = setInterval(() => {
    for (const incarnation of replicas.incarnations) {
      if (incarnation.exitCode !== undefined) continue;
      void residentKiB(incarnation.program.pid).then((kib) => {
        if (kib !== undefined) peakKiB = Math.max(peakKiB, kib);
      });
    }
  }, sampleEveryMs);
  return {
    stop() {
      clearInterval(timer);
      return Math.round(peakKiB / 1024);
    },
  };
}
