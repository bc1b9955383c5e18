/**
 * The ProvisionController: watches claims, volumes and classes, provisions volumes for claims that
 * ask for this provisioner and deletes released ones, with the behaviour of
 * sig-storage-lib-external-provisioner v13.1.0. The contract it holds a provisioner to is in
 * `provisioner.ts`; where it differs from the Go library, and why, is in `docs/controller-reference.md`
 * and `docs/decisions/controller.md`.
 *
 * ```ts
 * const controller = new ProvisionController({ api, provisionerName: 'example.com/hostpath', provisioner });
 * controller.on('provisioned', ({ claim, volume, durationMs }) => audit(claim, volume, durationMs));
 * const stop = new AbortController();
 * process.once('SIGTERM', () => stop.abort());
 * await controller.run(stop.signal);
 * ```
 */
import type { V1PersistentVolume, V1PersistentVolumeClaim, V1StorageClass } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import { type KubeObject, resources } from './client/resource-client.ts';
import { createEventRecorder, type EventRecorder } from './events/event-recorder.ts';
import { HealthServer } from './http/health-server.ts';
import type { SharedInformer } from './informer/shared-informer.ts';
import { uidIndex } from './informer/store.ts';
import { withoutManagedFields } from './informer/without-managed-fields.ts';
import { BlockingPvStore, type SaveConfig } from './internal/blocking-pv-store.ts';
import { ClaimResize } from './internal/claim-resize.ts';
import { ClaimSync } from './internal/claim-sync.ts';
import { createControllerElector } from './internal/controller-elector.ts';
import { controllerInformers } from './internal/controller-informers.ts';
import { type ControllerMetrics, createControllerMetrics } from './internal/controller-metrics.ts';
import { runLeaderTerm } from './internal/leader-term.ts';
import { type ProbeRegistry, registerControllerChecks } from './internal/probes.ts';
import type { PvStore } from './internal/pv-store.ts';
import { registerQueueHandlers } from './internal/queue-handlers.ts';
import { queueLimiters, withOwnRateLimit } from './internal/queue-limiters.ts';
import { QueuePvStore } from './internal/queue-pv-store.ts';
import type { RecordEvent } from './internal/record-event.ts';
import { rescheduleClaim } from './internal/reschedule.ts';
import { createResizeMetrics } from './internal/resize-metrics.ts';
import {
  defaults,
  ensureUidIndex,
  type ResolvedOptions,
  resolveOptions,
} from './internal/resolve-options.ts';
import { SlowRetrySet } from './internal/slow-retry.ts';
import { VolumeAttributesClassCache } from './internal/volume-attributes-classes.ts';
import { VolumeSync } from './internal/volume-sync.ts';
import type { WorkFence } from './internal/work-fence.ts';
import type { LeaderElector } from './leader-election/leader-elector.ts';
import { leaderIdentity } from './leader-election/leader-identity.ts';
import { type Leadership, LeadershipLapsedError } from './leader-election/lease-fence.ts';
import { leaseNameFor } from './leader-election/lease-name.ts';
import { LeaderElectionLostError } from './leader-election-lost-error.ts';
import type { ProvisionControllerEvents } from './lifecycle-events.ts';
import type { ProvisionControllerOptions } from './provision-controller-options.ts';
import { type Clock, realClock } from './util/clock.ts';
import { holdProcessOpen } from './util/keep-alive.ts';
import { LifecycleEvents, type LifecycleSink } from './util/lifecycle-emitter.ts';
import { createLogger, type Logger } from './util/logger.ts';
import { RateLimitingQueue } from './workqueue/rate-limiting-queue.ts';

export type { ProbeRegistry } from './internal/probes.ts';
export type { ProvisionControllerOptions } from './provision-controller-options.ts';

/**
 * Runs a {@link Provisioner} against the cluster. Construct once, {@link run} once. Emits the typed
 * {@link ProvisionControllerEvents} (`on('provisioned', …)`); with no listener an event costs one
 * `listenerCount` lookup, and a listener that throws is logged, never fails the controller.
 */
export class ProvisionController extends LifecycleEvents<ProvisionControllerEvents> {
  /** The registry holding the `controller_*` and `workqueue_*` collectors (the host may serve it). */
  readonly registry: Registry;
  /** `<hostname>_<uuid>`: the Lease holder identity, new for each controller. */
  readonly identity: string;
  /** The Lease used for leader election, `namespace/name`. */
  readonly lease: string;
  readonly #options: ResolvedOptions;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #metrics: ControllerMetrics;
  readonly #recorder: EventRecorder;
  readonly #events: LifecycleSink<ProvisionControllerEvents>;
  readonly #claims: SharedInformer<V1PersistentVolumeClaim>;
  readonly #volumes: SharedInformer<V1PersistentVolume>;
  readonly #classes: SharedInformer<V1StorageClass>;
  /** Started by the first claim that names a class; never waited for before work starts. */
  readonly #attributeClasses: VolumeAttributesClassCache;
  /** Informers this controller created, and therefore starts and stops. */
  readonly #ownedInformers: readonly { run(signal: AbortSignal): Promise<void> }[];
  readonly #claimQueue: RateLimitingQueue;
  readonly #volumeQueue: RateLimitingQueue;
  readonly #slowRetry: SlowRetrySet;
  readonly #claimSync: ClaimSync;
  readonly #volumeSync: VolumeSync;
  readonly #store: PvStore;
  readonly #queueStore: QueuePvStore | undefined;
  readonly #elector: LeaderElector | undefined;
  /** The leader part while it runs under the elector. */
  #leading: Promise<void> | undefined;
  /** The current leadership term under the elector (its fence), if any. */
  #leadership: Leadership | undefined;
  /** The owned informers once started (with the first term), until `run()` ends. */
  #informers: { stop: AbortController; done: Promise<void> } | undefined;
  /** What every side-effecting step checks immediately before it acts. */
  readonly #fence: WorkFence = {
    assertLeader: () => {
      if (this.#elector === undefined) return;
      const leadership = this.#leadership;
      if (leadership === undefined) throw new LeadershipLapsedError(`not leading lease ${this.lease}`);
      leadership.assertLeader();
    },
    abandoned: () =>
      this.#hardStop.signal.aborted ||
      (this.#elector !== undefined && !(this.#leadership?.isValid() ?? false)),
  };
  /** Aborted when `run()` ends for good (after the grace period of a graceful stop). */
  readonly #hardStop = new AbortController();
  /** The signal given to {@link run}: only its abort is a requested (graceful) stop. */
  #requestedStop: AbortSignal = new AbortController().signal;
  #phase: 'new' | 'running' | 'stopped' = 'new';

  /** @throws ConfigurationError when an option is invalid. */
  constructor(options: ProvisionControllerOptions) {
    super();
    const resolved = resolveOptions(options);
    this.#options = resolved;
    this.#clock = resolved.clock ?? realClock;
    this.#logger = (resolved.logger ?? createLogger()).child({ provisioner: resolved.provisionerName });
    this.identity = leaderIdentity();
    this.registry = resolved.metricsRegistry ?? new Registry();
    this.#metrics = createControllerMetrics(this.registry);
    this.#events = this.lifecycleSink(this.#logger);
    const { api } = resolved;
    const clock = this.#clock;

    this.#recorder = createEventRecorder({
      // Two events per claim must not take the tokens of the PV creates they describe.
      events: withOwnRateLimit(api, resolved.eventRateLimit).resource(resources.events),
      component: `${resolved.provisionerName}_${this.identity}`,
      clock,
      logger: this.#logger,
      registry: this.registry,
    });
    const informers = controllerInformers(resolved, clock, this.#logger);
    this.#claims = informers.claims;
    this.#volumes = informers.volumes;
    this.#classes = informers.classes;
    this.#attributeClasses = new VolumeAttributesClassCache({
      client: withoutManagedFields(api.resource(resources.volumeAttributesClasses)),
      clock,
      logger: this.#logger,
      syncTimeoutMs: resolved.apiRequestTimeoutMs || defaults.apiRequestTimeoutMs,
    });
    this.#ownedInformers = [...informers.owned, this.#attributeClasses];

    const limiters = queueLimiters(resolved, clock);
    this.#claimQueue = new RateLimitingQueue({
      name: 'claims',
      clock,
      registry: this.registry,
      rateLimiter: limiters[0],
    });
    this.#volumeQueue = new RateLimitingQueue({
      name: 'volumes',
      clock,
      registry: this.registry,
      rateLimiter: limiters[1],
    });
    this.#slowRetry = new SlowRetrySet(resolved.retryIntervalMaxMs, clock);

    const recordClaimEvent = this.#eventRecorderFor('PersistentVolumeClaim');
    const volumesClient = api.resource(resources.persistentVolumes);
    const claimsByUid = (uid: string): V1PersistentVolumeClaim[] => this.#claims.store.byIndex(uidIndex, uid);
    const saveConfig: SaveConfig = {
      pvs: volumesClient,
      recordEvent: recordClaimEvent,
      clock,
      apiRequestTimeoutMs: resolved.apiRequestTimeoutMs,
      verifyExistingPV: resolved.verifyExistingPV,
      signal: this.#hardStop.signal,
      fence: this.#fence,
    };
    const { pvSave } = resolved;
    if (pvSave.strategy === 'queue') {
      this.#queueStore = new QueuePvStore({
        ...saveConfig,
        limiter: pvSave.limiter,
        workers: pvSave.workers,
        claimsByUid,
        logger: this.#logger,
        registry: this.registry,
      });
      this.#store = this.#queueStore;
    } else {
      this.#store = new BlockingPvStore(saveConfig, pvSave.backoff, resolved.provisioner);
    }

    const { provisioner } = resolved;
    const { expand } = provisioner;
    const resize =
      expand === undefined
        ? undefined
        : new ClaimResize({
            expand: (expandOptions, context) => expand.call(provisioner, expandOptions, context),
            shouldExpand: provisioner.shouldExpand?.bind(provisioner),
            provisionerName: resolved.provisionerName,
            knownNames: resolved.knownNames,
            claims: api.resource(resources.persistentVolumeClaims),
            volumes: volumesClient,
            getVolume: (name) => this.#volumes.store.getByKey(name),
            getClass: (name) => this.#classes.store.getByKey(name),
            recordEvent: recordClaimEvent,
            metrics: createResizeMetrics(this.registry),
            clock,
            apiRequestTimeoutMs: resolved.apiRequestTimeoutMs,
            fence: this.#fence,
          });
    this.#claimSync = new ClaimSync({
      provisioner: resolved.provisioner,
      provisionerName: resolved.provisionerName,
      knownNames: resolved.knownNames,
      volumeName: resolved.volumeName,
      addFinalizer: resolved.addFinalizer,
      claimsByUid,
      getClass: (name) => this.#classes.store.getByKey(name),
      volumeExists: (name) => this.#volumes.store.getByKey(name) !== undefined,
      volumeAttributesClass: (name, signal) => this.#attributeClasses.get(name, signal),
      reschedule: (claim, signal) =>
        rescheduleClaim(
          {
            claims: api.resource(resources.persistentVolumeClaims),
            mode: resolved.rescheduleMode,
            clock,
            apiRequestTimeoutMs: resolved.apiRequestTimeoutMs,
          },
          claim,
          signal,
        ),
      slowRetry: this.#slowRetry,
      ...(resize === undefined ? {} : { resize }),
      recordEvent: recordClaimEvent,
      store: this.#store,
      metrics: this.#metrics,
      events: this.#events,
      clock,
      fence: this.#fence,
    });
    this.#volumeSync = new VolumeSync({
      provisioner: resolved.provisioner,
      knownNames: resolved.knownNames,
      addFinalizer: resolved.addFinalizer,
      pvDeletePrecondition: resolved.pvDeletePrecondition,
      volumes: volumesClient,
      getVolume: (name) => this.#volumes.store.getByKey(name),
      recordEvent: this.#eventRecorderFor('PersistentVolume'),
      metrics: this.#metrics,
      events: this.#events,
      clock,
      apiRequestTimeoutMs: resolved.apiRequestTimeoutMs,
      fence: this.#fence,
    });

    const name = leaseNameFor(resolved.provisionerName);
    this.lease = `${resolved.leaderElection.namespace}/${name}`;
    this.#elector = resolved.leaderElection.enabled ? this.#createElector(name) : undefined;
    // Last: everything above may still reject the options, and these change the caller's informers.
    if (resolved.claimsInformer !== undefined) ensureUidIndex(resolved.claimsInformer);
    registerQueueHandlers({
      claims: this.#claims,
      volumes: this.#volumes,
      claimQueue: this.#claimQueue,
      volumeQueue: this.#volumeQueue,
      volumeSync: this.#volumeSync,
      resyncPeriodMs: resolved.resyncPeriodMs,
    });
  }

  /**
   * Runs until `signal` aborts, then stops gracefully: takes no more work, lets in-flight operations
   * finish (at most `shutdownTimeoutMs`, then aborts them), stops the informers it created and
   * flushes events. Settles after that. Runs once. When the Lease is lost or its fence lapses,
   * in-flight operations are aborted at once (a successor may lead already); then, by default, the
   * controller campaigns again (`leaderElection: { onLost: 'reject' }` rejects with a
   * `LeaderElectionLostError`).
   *
   * While it runs it holds the process open on purpose (one ref'd handle, released when it settles):
   * an unreachable API server is retried with backoff for as long as it takes, never a reason for
   * Node to find nothing left to wait for and exit. Every other timer of the controller is unref'd.
   *
   * @throws the listen error when `metricsServer.port` is set and cannot be bound (before anything
   *   starts).
   */
  async run(signal: AbortSignal = new AbortController().signal): Promise<void> {
    if (this.#phase !== 'new') throw new Error('ProvisionController.run can be called only once');
    this.#phase = 'running';
    this.#requestedStop = signal;
    const release = holdProcessOpen();
    let server: HealthServer | undefined;
    try {
      server = await this.#listen();
      await this.#runControllers(signal);
    } finally {
      this.#phase = 'stopped';
      await server?.close();
      release();
    }
  }

  /**
   * Adds the controller's probes to `server`:
   * - health `leader-election` fails while this replica leads but has not renewed the Lease for
   *   `leaseDurationMs` + 20 s (client-go's tolerance; more if `retryPeriodMs` + `renewDeadlineMs`
   *   exceeds it). A healthy leader renews or gives up within `retryPeriodMs` + `renewDeadlineMs` of its
   *   last renewal, so only a stuck one fails, not one riding out an API blip;
   * - readiness `provision-controller` passes while `run()` runs and either the three caches have
   *   synced or, with leader election, this replica stands by for the Lease. Standby replicas are
   *   ready so that a rolling update can start the successor before stopping the leader. It fails
   *   while the Lease is forbidden (HTTP 403), naming the verb and the RBAC rule that grants it.
   *
   * The built-in server (`metricsServer`) has them already.
   */
  registerChecks(server: ProbeRegistry): void {
    registerControllerChecks(server, {
      elector: this.#elector,
      options: this.#options.leaderElection,
      phase: () => this.#phase,
      informers: { claims: this.#claims, volumes: this.#volumes, classes: this.#classes },
    });
  }

  /** Starts the built-in server when `metricsServer.port` is set. */
  async #listen(): Promise<HealthServer | undefined> {
    const { metricsServer, metricsRegistry } = this.#options;
    const { port, address, path } = metricsServer;
    if (port === 0) return undefined;
    const server = new HealthServer({
      port,
      address,
      metricsPath: path,
      registries: [this.registry],
      // Go serves the default registry, process metrics included; a host's own registry is served as given.
      processMetrics: metricsRegistry === undefined,
    });
    this.registerChecks(server);
    await server.listen();
    this.#logger.info({ address, port, path }, 'Serving metrics');
    return server;
  }

  async #runControllers(signal: AbortSignal): Promise<void> {
    const stopQueueStore = new AbortController();
    const queueStoreDone = this.#queueStore?.run(stopQueueStore.signal);
    try {
      if (this.#elector === undefined) {
        await this.#runLeaderTerm(signal);
        return;
      }
      for (;;) {
        const outcome = await this.#elector.run(signal);
        await this.#leading;
        if (outcome !== 'lost' || signal.aborted) return;
        if (this.#options.leaderElection.onLost === 'reject') throw new LeaderElectionLostError(this.lease);
        // Every operation was aborted when the fence closed; leading again needs the Lease afresh.
        this.#logger.error({ lease: this.lease }, 'Lost the lease; stopped all work, campaigning again');
      }
    } finally {
      this.#claimQueue.shutDown();
      this.#volumeQueue.shutDown();
      this.#informers?.stop.abort();
      await this.#informers?.done;
      stopQueueStore.abort();
      await queueStoreDone;
      this.#hardStop.abort();
      await this.#recorder.close();
    }
  }

  /**
   * Starts the informers this controller owns, once, with the first leadership term. They run until
   * `run()` ends, across terms: a replica that lost the Lease keeps its caches warm for the next one.
   */
  #startInformers(): void {
    if (this.#informers !== undefined) return;
    const stop = new AbortController();
    const done = Promise.all(this.#ownedInformers.map((informer) => informer.run(stop.signal))).then(
      () => undefined,
    );
    this.#slowRetry.runPurge(stop.signal);
    this.#informers = { stop, done };
  }

  /** One leadership term (the whole run without leader election); see {@link runLeaderTerm}. */
  #runLeaderTerm(signal: AbortSignal, lost?: AbortSignal): Promise<void> {
    this.#startInformers();
    return runLeaderTerm(
      {
        identity: this.identity,
        options: this.#options,
        clock: this.#clock,
        logger: this.#logger,
        fence: this.#fence,
        events: this.#events,
        claimQueue: this.#claimQueue,
        volumeQueue: this.#volumeQueue,
        claimSync: this.#claimSync,
        volumeSync: this.#volumeSync,
        informers: [this.#claims, this.#volumes, this.#classes],
        requestedStop: this.#requestedStop,
        hardStop: this.#hardStop,
      },
      signal,
      lost,
    );
  }

  #createElector(name: string): LeaderElector {
    return createControllerElector({
      options: this.#options,
      name,
      identity: this.identity,
      callbacks: {
        onStartedLeading: (signal, leadership) => {
          this.#leadership = leadership;
          this.#leading = this.#runLeaderTerm(signal, leadership.lost);
          return this.#leading;
        },
        onStoppedLeading: () => this.#logger.info({ lease: this.lease }, 'Stopped leading'),
      },
      recorder: this.#recorder,
      clock: this.#clock,
      logger: this.#logger,
      registry: this.registry,
      events: this.#events,
    });
  }

  /**
   * Adapts the recorder for one kind of object: cached objects often lack `kind` and `apiVersion`.
   * Events are side effects too: none is recorded once this replica's work is abandoned.
   */
  #eventRecorderFor(kind: 'PersistentVolumeClaim' | 'PersistentVolume'): RecordEvent {
    return (object: KubeObject, type, reason, message) => {
      if (this.#fence.abandoned()) return;
      this.#recorder.event({ apiVersion: 'v1', kind, ...object }, type, reason, message);
    };
  }
}
