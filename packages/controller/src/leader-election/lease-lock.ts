/**
 * The Lease-backed lock of leader election: reads and writes the election record in a
 * `coordination.k8s.io/v1` Lease, keeping the object last read or written so every update carries its
 * resourceVersion (optimistic concurrency: a concurrent writer makes the update fail with 409).
 */
import type { V1Lease, V1LeaseSpec, V1MicroTime } from '@kubernetes/client-node';
import { ApiError } from '../client/api-error.ts';
import type { CallOptions, ResourceClient } from '../client/resource-client.ts';

/** The election state stored in the Lease spec. */
export interface LeaderElectionRecord {
  /** `''` when nobody holds the lease. */
  holderIdentity: string;
  leaseDurationSeconds: number;
  /** As read from the server (client-node may leave MicroTime values as strings), or written by us. */
  acquireTime: V1MicroTime | undefined;
  renewTime: V1MicroTime | undefined;
  leaseTransitions: number;
}

/** Where the lock lives and who takes it. */
export interface LeaseLockConfig {
  leases: ResourceClient<V1Lease>;
  namespace: string;
  name: string;
  /** This candidate's identity, unique among candidates. */
  identity: string;
}

/** A read record and its canonical text, compared to detect any change of the stored record. */
export interface ObservedLeaseRecord {
  record: LeaderElectionRecord;
  raw: string;
}

/** Lock operations on one Lease. Failures reject with the client's errors. */
export class LeaseLock {
  readonly namespace: string;
  readonly name: string;
  readonly identity: string;
  readonly #leases: ResourceClient<V1Lease>;
  #lease: V1Lease | undefined;

  constructor(config: LeaseLockConfig) {
    this.#leases = config.leases;
    this.namespace = config.namespace;
    this.name = config.name;
    this.identity = config.identity;
  }

  /** The Lease as last read or written, if any. */
  get lease(): V1Lease | undefined {
    return this.#lease;
  }

  /** `namespace/name`, for logs and errors. */
  describe(): string {
    return `${this.namespace}/${this.name}`;
  }

  async get(options: CallOptions = {}): Promise<ObservedLeaseRecord> {
    const lease = await this.#leases.get(this.name, { ...options, namespace: this.namespace });
    this.#lease = lease;
    const record = recordOf(lease.spec);
    return { record, raw: rawRecord(record) };
  }

  async create(record: LeaderElectionRecord, options: CallOptions = {}): Promise<void> {
    const lease: V1Lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: this.name, namespace: this.namespace },
      spec: specOf(record),
    };
    this.#lease = await this.#leases.create(lease, { ...options, namespace: this.namespace });
  }

  /**
   * Watches this Lease only, calling `onChange` with each record it holds, from its current state on,
   * and with `undefined` when it is deleted. Settles like {@link ResourceClient.watch}; an `ERROR`
   * event rejects with its {@link ApiError}. Does not change the object later updates are based on.
   */
  async watch(
    options: CallOptions & { timeoutSeconds?: number },
    onChange: (observed: ObservedLeaseRecord | undefined) => void,
  ): Promise<void> {
    let failure: ApiError | undefined;
    const stop = new AbortController();
    const signal = options.signal ? AbortSignal.any([options.signal, stop.signal]) : stop.signal;
    await this.#leases.watch(
      {
        ...options,
        signal,
        namespace: this.namespace,
        fieldSelector: `metadata.name=${this.name}`,
      },
      (event) => {
        if (event.type === 'ERROR') {
          failure = ApiError.fromStatus(event.object);
          stop.abort();
        } else if (event.type === 'DELETED') {
          onChange(undefined);
        } else if (event.type !== 'BOOKMARK') {
          const record = recordOf(event.object.spec);
          onChange({ record, raw: rawRecord(record) });
        }
      },
    );
    if (failure !== undefined) throw failure;
  }

  /** Replaces the whole spec of the Lease last read or written (`get` or `create` must come first). */
  async update(record: LeaderElectionRecord, options: CallOptions = {}): Promise<void> {
    if (this.#lease === undefined)
      throw new Error(`lease ${this.describe()} not initialized: get or create it first`);
    const lease: V1Lease = { ...this.#lease, spec: specOf(record) };
    this.#lease = await this.#leases.update(lease, { ...options, namespace: this.namespace });
  }
}

function recordOf(spec: V1LeaseSpec | undefined): LeaderElectionRecord {
  return {
    holderIdentity: spec?.holderIdentity ?? '',
    leaseDurationSeconds: spec?.leaseDurationSeconds ?? 0,
    acquireTime: spec?.acquireTime,
    renewTime: spec?.renewTime,
    leaseTransitions: spec?.leaseTransitions ?? 0,
  };
}

/** The spec written for `record`; `preferredHolder` and `strategy` are dropped, as in client-go. */
function specOf(record: LeaderElectionRecord): V1LeaseSpec {
  const spec: V1LeaseSpec = {
    holderIdentity: record.holderIdentity,
    leaseDurationSeconds: record.leaseDurationSeconds,
    leaseTransitions: record.leaseTransitions,
  };
  if (record.acquireTime !== undefined) spec.acquireTime = record.acquireTime;
  if (record.renewTime !== undefined) spec.renewTime = record.renewTime;
  return spec;
}

function rawRecord(record: LeaderElectionRecord): string {
  return JSON.stringify([
    record.holderIdentity,
    record.leaseDurationSeconds,
    timeText(record.acquireTime),
    timeText(record.renewTime),
    record.leaseTransitions,
  ]);
}

function timeText(value: unknown): string {
  if (value instanceof Date) return value.toISOString();
  return typeof value === 'string' ? value : '';
}
