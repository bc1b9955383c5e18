/**
 * Measures the volumes an instance owns, one at a time and within an I/O budget, and publishes the
 * results as {@link UsageGauges}. Runs from `Provisioner.maintain`, never on the provisioning path.
 * Scans are queued with `p-queue` (one at a time, each cut off after the scan timeout, keeping the
 * volume's previous values and their timestamp), and every system call of every scan takes a slot
 * of a second `p-queue` that releases `operationsPerSecond` slots a second: the budget holds for the
 * instance as a whole, whatever the number of volumes. How a volume is measured (a walk of its
 * directory, project-quota accounting…) is the provisioner's: `measure`.
 */
import PQueue from 'p-queue';
import type { Registry } from 'prom-client';
import type { EventRecorder } from '../events/event-recorder.ts';
import type { Logger } from '../util/logger.ts';
import { UsageGauges, type VolumeLabels } from './usage-gauges.ts';

/** A volume to measure: who it is for and what its claim asked for; provisioners add where it is. */
export interface MeasuredVolume extends VolumeLabels {
  /** The claim's UID, for the event on the claim. */
  readonly claimUid: string | undefined;
  /** The PV's capacity in bytes; `undefined` when it has none that parses. */
  readonly requestedBytes: number | undefined;
}

/** What one measurement found. */
export interface VolumeUsage {
  /** Bytes allocated (as `du` counts them). */
  readonly bytes: number;
  readonly inodes: number;
}

/** How one walk runs: its cancellation and its share of the I/O budget. */
export interface UsageScan {
  /** Aborts when the scan times out or the leadership term ends. */
  readonly signal: AbortSignal;
  /** The I/O budget: await before each system call. */
  readonly pace: () => Promise<void>;
}

/** Measures one volume; `undefined` when it is gone. */
export type MeasureVolume<V extends MeasuredVolume = MeasuredVolume> = (
  volume: V,
  scan: UsageScan,
) => Promise<VolumeUsage | undefined>;

/** Options of {@link UsageMonitor}. */
export interface UsageMonitorOptions<V extends MeasuredVolume = MeasuredVolume> {
  /** Where the gauges are registered: the registry `/metrics` serves. */
  readonly registry: Registry;
  /** How a volume is measured. */
  readonly measure: MeasureVolume<V>;
  /** System calls all scans together may make per second. */
  readonly operationsPerSecond: number;
  /** How long one volume's scan may take before it is given up (and its last values kept). */
  readonly scanTimeoutMs: number;
  /** Called once each time a volume's usage goes above its request (not again until it went below). */
  readonly onExceeded: (volume: V, usedBytes: number) => void;
  /** Clock of the measurement timestamps, epoch milliseconds. Default `Date.now`. */
  readonly now?: (() => number) | undefined;
}

// Budget slots are released ten times a second, so a scan proceeds smoothly rather than in bursts.
const budgetIntervalMs = 100;

/** Publishes the usage of the volumes it is handed; see the module comment. */
export class UsageMonitor<V extends MeasuredVolume = MeasuredVolume> {
  readonly #gauges: UsageGauges;
  readonly #scans: PQueue;
  readonly #budget: PQueue;
  readonly #measure: MeasureVolume<V>;
  readonly #onExceeded: UsageMonitorOptions<V>['onExceeded'];
  readonly #now: () => number;
  readonly #scanTimeoutMs: number;
  /** PV names whose last measurement was above their request. */
  readonly #exceeded = new Set<string>();
  #watched: AbortSignal | undefined;

  constructor(options: UsageMonitorOptions<V>) {
    if (!(options.operationsPerSecond > 0)) throw new RangeError('operationsPerSecond must be > 0');
    this.#gauges = new UsageGauges(options.registry);
    this.#scans = new PQueue({ concurrency: 1, timeout: options.scanTimeoutMs });
    this.#budget = new PQueue({
      intervalCap: Math.max(1, Math.round((options.operationsPerSecond * budgetIntervalMs) / 1000)),
      interval: budgetIntervalMs,
    });
    this.#measure = options.measure;
    this.#onExceeded = options.onExceeded;
    this.#now = options.now ?? Date.now;
    this.#scanTimeoutMs = options.scanTimeoutMs;
  }

  /**
   * The options of a walk the monitor does not publish (an archive, say) under the same rules as its
   * scans: `pace` takes a slot of the shared I/O budget, so all walks together stay within
   * `operationsPerSecond`, and `signal` aborts when `stop` does or after the scan timeout.
   */
  scanOptions(stop: AbortSignal): UsageScan {
    const signal = AbortSignal.any([stop, AbortSignal.timeout(this.#scanTimeoutMs)]);
    return { signal, pace: this.#pace(signal) };
  }

  /**
   * Measures each of `volumes` in turn and publishes the results; drops the series of every volume
   * not listed. A volume that cannot be measured (timeout, error) keeps its previous values. When
   * `signal` aborts (the leadership term ended) every series is dropped: only the owner reports.
   */
  async refresh(volumes: readonly V[], signal: AbortSignal, logger: Logger): Promise<void> {
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
          logger.warn({ pv: volume.pvName, err }, 'could not measure volume usage; keeping its last values');
        }),
    );
    await Promise.all(scans);
  }

  async #scanOne(volume: V, signal: AbortSignal): Promise<void> {
    const usage = await this.#measure(volume, { signal, pace: this.#pace(signal) });
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

  #pace(signal: AbortSignal): () => Promise<void> {
    return () => this.#budget.add(() => undefined, { signal });
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
export function warnOnClaim(
  recorder: Pick<EventRecorder, 'event'>,
): (volume: MeasuredVolume, usedBytes: number) => void {
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
