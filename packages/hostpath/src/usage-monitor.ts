/**
 * Measures the volumes an instance owns, one at a time and within an I/O budget, and publishes the
 * results as {@link UsageGauges}. Runs from `Provisioner.maintain`, never on the provisioning path.
 * Scans are queued with `p-queue` (one at a time, each cut off after the scan timeout, keeping the
 * volume's previous values and their timestamp), and every system call of every scan takes a slot
 * of a second `p-queue` that releases `operationsPerSecond` slots a second: the budget holds for the
 * instance as a whole, whatever the number of volumes.
 */
import type { Logger } from '@kube-provisioner/controller';
import type { EventRecorder } from '@kube-provisioner/controller/events';
import {
  type FsOps,
  type RelativeVolumePath,
  scanVolumeUsage,
  type UsageScanOptions,
  type VolumeUsage,
} from '@kube-provisioner/safe-fs';
import PQueue from 'p-queue';
import type { Registry } from 'prom-client';
import { UsageGauges, type VolumeLabels } from './usage-gauges.ts';

/** A volume to measure: who it is for, where it is, and what its claim asked for. */
export interface MeasuredVolume extends VolumeLabels {
  /** The claim's UID, for the event on the claim. */
  readonly claimUid: string | undefined;
  /** The volume directory, relative to the root. */
  readonly path: RelativeVolumePath;
  /** The PV's capacity in bytes; `undefined` when it has none that parses. */
  readonly requestedBytes: number | undefined;
}

/** Measures one volume; `undefined` when its directory is gone. */
export type MeasureVolume = (
  volume: MeasuredVolume,
  scan: {
    /** Aborts when the scan times out or the leadership term ends. */
    readonly signal: AbortSignal;
    /** The I/O budget: await before each system call (see {@link UsageScanOptions.pace}). */
    readonly pace: () => Promise<void>;
  },
) => Promise<Pick<VolumeUsage, 'bytes' | 'inodes'> | undefined>;

/** Options of {@link UsageMonitor}. */
export interface UsageMonitorOptions {
  /** Where the gauges are registered: the registry `/metrics` serves. */
  readonly registry: Registry;
  /** The root the volume paths are relative to. */
  readonly root: string;
  /** System calls of the scans. Default: the real ones, on the thread pool. */
  readonly fs?: FsOps | undefined;
  /** System calls all scans together may make per second. */
  readonly operationsPerSecond: number;
  /** How long one volume's scan may take before it is given up (and its last values kept). */
  readonly scanTimeoutMs: number;
  /** Called once each time a volume's usage goes above its request (not again until it went below). */
  readonly onExceeded: (volume: MeasuredVolume, usedBytes: number) => void;
  /** How a volume is measured. Default: a walk of its directory ({@link scanVolumeUsage}). */
  readonly measure?: MeasureVolume | undefined;
  /** Clock of the measurement timestamps, epoch milliseconds. Default `Date.now`. */
  readonly now?: (() => number) | undefined;
}

/** Measures a volume by walking its directory under `root` ({@link scanVolumeUsage}). */
export function walkVolume(root: string, fs?: FsOps): MeasureVolume {
  return (volume, scan) => scanVolumeUsage(root, volume.path, { fs, ...scan });
}

// Budget slots are released ten times a second, so a scan proceeds smoothly rather than in bursts.
const budgetIntervalMs = 100;

/** Publishes the usage of the volumes it is handed; see the module comment. */
export class UsageMonitor {
  readonly #gauges: UsageGauges;
  readonly #scans: PQueue;
  readonly #budget: PQueue;
  readonly #measure: MeasureVolume;
  readonly #onExceeded: UsageMonitorOptions['onExceeded'];
  readonly #now: () => number;
  /** PV names whose last measurement was above their request. */
  readonly #exceeded = new Set<string>();
  #watched: AbortSignal | undefined;

  constructor(options: UsageMonitorOptions) {
    if (!(options.operationsPerSecond > 0)) throw new RangeError('operationsPerSecond must be > 0');
    this.#gauges = new UsageGauges(options.registry);
    this.#scans = new PQueue({ concurrency: 1, timeout: options.scanTimeoutMs });
    this.#budget = new PQueue({
      intervalCap: Math.max(1, Math.round((options.operationsPerSecond * budgetIntervalMs) / 1000)),
      interval: budgetIntervalMs,
    });
    this.#measure = options.measure ?? walkVolume(options.root, options.fs);
    this.#onExceeded = options.onExceeded;
    this.#now = options.now ?? Date.now;
  }

  /**
   * Measures each of `volumes` in turn and publishes the results; drops the series of every volume
   * not listed. A volume that cannot be measured (timeout, error) keeps its previous values. When
   * `signal` aborts (the leadership term ended) every series is dropped: only the owner reports.
   */
  async refresh(volumes: readonly MeasuredVolume[], signal: AbortSignal, logger: Logger): Promise<void> {
    this.#dropOnAbort(signal);
    signal.throwIfAborted();
    const names = new Set(volumes.map((volume) => volume.pvName));
    this.#gauges.keepOnly(names);
    for (const pvName of this.#exceeded) if (!names.has(pvName)) this.#exceeded.delete(pvName);
    for (const volume of volumes) this.#gauges.requested(volume, volume.requestedBytes);
    const scans = volumes.map((volume) =>
      this.#scans
        .add(
          ({ signal: scanSignal }) => this.#scanOne(volume, AbortSignal.any([signal, scanSignal ?? signal])),
          {
            signal,
          },
        )
        .catch((err: unknown) => {
          if (signal.aborted) return;
          logger.warn(
            { pv: volume.pvName, path: volume.path, err },
            'could not measure volume usage; keeping its last values',
          );
        }),
    );
    await Promise.all(scans);
  }

  async #scanOne(volume: MeasuredVolume, signal: AbortSignal): Promise<void> {
    const pace = () => this.#budget.add(() => undefined, { signal });
    const usage = await this.#measure(volume, { signal, pace });
    signal.throwIfAborted();
    if (usage === undefined) return;
    this.#gauges.measured(volume, usage, this.#now());
    const over = volume.requestedBytes !== undefined && usage.bytes > volume.requestedBytes;
    if (!over) {
      this.#exceeded.delete(volume.pvName);
    } else if (!this.#exceeded.has(volume.pvName)) {
      this.#exceeded.add(volume.pvName);
      this.#onExceeded(volume, usage.bytes);
    }
  }

  #dropOnAbort(signal: AbortSignal): void {
    if (this.#watched === signal) return;
    this.#watched = signal;
    signal.addEventListener(
      'abort',
      // Crossings already warned about stay remembered: the same process leading again warns not twice.
      () => this.#gauges.keepOnly(new Set()),
      { once: true },
    );
  }
}

/** Reason of the Warning event on a claim whose volume holds more than it requested. */
export const usageExceededReason = 'VolumeUsageExceedsRequest';

/** An {@link UsageMonitorOptions.onExceeded} that puts one Warning event on the volume's claim. */
export function warnOnClaim(recorder: Pick<EventRecorder, 'event'>): UsageMonitorOptions['onExceeded'] {
  return (volume, usedBytes) => {
    const claim = {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: {
        namespace: volume.namespace,
        name: volume.claimName,
        ...(volume.claimUid === undefined ? {} : { uid: volume.claimUid }),
      },
    };
    recorder.event(
      claim,
      'Warning',
      usageExceededReason,
      `volume ${volume.pvName} uses ${usedBytes} bytes, more than the ${volume.requestedBytes} requested`,
    );
  };
}
