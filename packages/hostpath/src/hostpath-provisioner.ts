/**
 * The hostpath {@link Provisioner}: directories under a root on the node, returned as `hostPath` or
 * `local` PVs. No helper pods: the provisioner process does the filesystem work itself, through the
 * symlink-safe operations of `@kube-provisioner/safe-fs`.
 */
import {
  type ExpandOptions,
  type ExpandResult,
  IgnoredError,
  InfeasibleError,
  type OperationContext,
  type Provisioner,
  type ProvisionOptions,
  type ProvisionResult,
  provisionFailure,
} from '@kube-provisioner/controller';
import { isNotFound, type ResourceClient } from '@kube-provisioner/controller/client';
import type { UsageMonitor, VolumeLister } from '@kube-provisioner/controller/usage';
import { annAlphaSelectedNode, annSelectedNode } from '@kube-provisioner/controller/wire-names';
import {
  explainPermissionError,
  type FsOps,
  isPersistentRefusal,
  joinBasePath,
  type RelativeVolumePath,
  relativePathUnder,
  resolveVolumePath,
  VolumeRoot,
} from '@kube-provisioner/safe-fs';
import type { V1Node, V1PersistentVolume, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { type ClassParameters, parseClassParameters, resolveVolumeType } from './class-parameters.ts';
import { type HostPathVolume, listOwnedVolumes } from './owned-volumes.ts';
import {
  buildPersistentVolume,
  defaultNodeAffinityKey,
  volumeNode,
  volumePath,
} from './persistent-volume.ts';
import { type ProjectQuotaAccess, projectLimits, SizeEnforcement } from './size-enforcement.ts';
import { quantityBytes } from './storage-quantity.ts';

/** Deployment mode: one instance per node (DaemonSet), or one leader-elected instance for a shared root. */
export type ProvisionerMode = 'per-node' | 'shared';

/** Reads Node objects (`nodes` `get`); a `ResourceClient<V1Node>` fits. */
export type NodeReader = Pick<ResourceClient<V1Node>, 'get'>;

/** Default provisioner name, as written in `StorageClass.provisioner`. */
export const defaultProvisionerName = 'kube-provisioner.io/hostpath';

/** Options of {@link HostPathProvisioner}. */
export interface HostPathProvisionerOptions {
  readonly mode: ProvisionerMode;
  /** Recorded in each directory's ownership record. Default {@link defaultProvisionerName}. */
  readonly provisionerName?: string | undefined;
  /** Absolute directory holding the volumes; the same path on the node and in the provisioner's pod. */
  readonly root: string;
  /** This node. Required in per-node mode; in shared mode it is only recorded on the PVs. */
  readonly nodeName?: string | undefined;
  /** Node label used for PV node affinity in per-node mode. Default `kubernetes.io/hostname`. */
  readonly nodeAffinityKey?: string | undefined;
  /**
   * Node access. In per-node mode it resolves the affinity label value (which may differ from the
   * node name) and lets any instance release the PVs of a node that no longer exists. Without it the
   * affinity value is the node name and PVs of vanished nodes stay `Released`.
   */
  readonly nodes?: NodeReader | undefined;
  /** System calls used on the root; tests inject failures here. Default: the real ones. */
  readonly fs?: FsOps | undefined;
  /**
   * Usage reporting: each `maintain` call measures the volumes this instance owns (read with
   * `volumes`) through `monitor`. Absent: no usage is measured.
   */
  readonly usage?:
    | { readonly monitor: UsageMonitor<HostPathVolume>; readonly volumes: VolumeLister }
    | undefined;
  /** Project quotas, for classes with `enforceSize`. Default: `xfs_quota` and `/proc/self/mountinfo`. */
  readonly projectQuotas?: ProjectQuotaAccess | undefined;
}

// Per-node volumes live on one node, so only single-node access modes make sense.
const nodeLocalAccessModes: ReadonlySet<string> = new Set(['ReadWriteOnce', 'ReadWriteOncePod']);

/**
 * Provisions directories under a root. In per-node mode it only takes claims scheduled to its own
 * node and only deletes volumes recorded on its node; everything else is left to its peers, silently.
 */
export class HostPathProvisioner implements Provisioner {
  readonly #mode: ProvisionerMode;
  readonly #provisionerName: string;
  readonly #root: VolumeRoot;
  readonly #nodeName: string | undefined;
  readonly #affinityKey: string;
  readonly #nodes: NodeReader | undefined;
  readonly #usage: HostPathProvisionerOptions['usage'];
  readonly #sizes: SizeEnforcement;

  /** @throws Error when the root is not absolute, or per-node mode has no node name. */
  constructor(options: HostPathProvisionerOptions) {
    if (options.mode === 'per-node' && !options.nodeName) {
      throw new Error('per-node mode needs the node name (NODE_NAME)');
    }
    this.#mode = options.mode;
    this.#provisionerName = options.provisionerName ?? defaultProvisionerName;
    this.#root = new VolumeRoot(options.root, { fs: options.fs });
    if (this.#root.base === '/') throw new Error('the root directory must not be /');
    this.#nodeName = options.nodeName || undefined;
    this.#affinityKey = options.nodeAffinityKey ?? defaultNodeAffinityKey;
    this.#nodes = options.nodes;
    this.#usage = options.usage;
    this.#sizes = new SizeEnforcement(this.#root, options.projectQuotas);
  }

  shouldProvision(pvc: Readonly<V1PersistentVolumeClaim>): boolean {
    if (this.#mode === 'shared') return true;
    const annotations = pvc.metadata?.annotations ?? {};
    const selected = annotations[annSelectedNode] || annotations[annAlphaSelectedNode] || '';
    // A claim without a selected node gets through so provision() can explain the misconfiguration.
    return selected === '' || selected === this.#nodeName;
  }

  async provision(options: ProvisionOptions, context: OperationContext): Promise<ProvisionResult> {
    try {
      const { pvc, storageClass, pvName } = options;
      const parameters = parseClassParameters(storageClass.parameters);
      const volumeType = resolveVolumeType(parameters, pvc.metadata?.annotations);
      this.#checkPlacement(options.selectedNodeName);
      this.#checkRequest(pvc);
      if (volumeType === 'local' && this.#mode === 'shared') {
        throw new InfeasibleError('volume type "local" needs node affinity, which shared mode does not set');
      }
      const relative = this.#volumePath(parameters, pvc, pvName);
      const nodeAffinity =
        this.#mode === 'per-node'
          ? { key: this.#affinityKey, value: await this.#affinityValue(context.signal) }
          : undefined;
      context.signal.throwIfAborted();
      const path = await this.#createDirectory(relative, options, parameters, context);
      return {
        pv: buildPersistentVolume({
          pvName,
          pvc,
          storageClass,
          path,
          volumeType,
          nodeName: this.#nodeName,
          nodeAffinity,
        }),
      };
    } catch (err) {
      // Bad paths and permission refusals slow the retries down; ownership and symlink refusals
      // stay plain errors with an event. A permission refusal's event says how to fix it.
      return provisionFailure(explainPermissionError(err, this.#root.base), isPersistentRefusal);
    }
  }

  async shouldDelete(pv: Readonly<V1PersistentVolume>, context: OperationContext): Promise<boolean> {
    if (this.#mode === 'shared') return true;
    const node = volumeNode(pv);
    if (node === this.#nodeName) return true;
    // Only released volumes of a foreign node are worth a Node lookup.
    const releasable = pv.status?.phase === 'Released' && pv.spec?.persistentVolumeReclaimPolicy === 'Delete';
    return node !== undefined && releasable && (await this.#nodeVanished(node, context.signal));
  }

  async delete(pv: Readonly<V1PersistentVolume>, context: OperationContext): Promise<void> {
    const node = volumeNode(pv);
    if (this.#mode === 'per-node' && node !== this.#nodeName) {
      if (node !== undefined && (await this.#nodeVanished(node, context.signal))) {
        // Its disk is gone with the node; releasing the API object is all that is left to do.
        context.logger.info({ node }, 'node no longer exists; skipping directory cleanup');
        return;
      }
      throw new IgnoredError(
        node === undefined ? 'the volume records no node' : `the volume is on node ${node}`,
      );
    }
    const path = volumePath(pv);
    if (path === undefined) throw new Error('the volume has neither a hostPath nor a local source');
    // The stored path is untrusted input: it must resolve strictly inside the root.
    const relative = relativePathUnder(this.#root.base, path);
    context.signal.throwIfAborted();
    await this.#sizes.removeLimit(relative, pv.metadata?.name ?? '', context);
    await this.#removeDirectory(relative, pv, context);
  }

  /** In per-node mode only the volume's own node expands it; the others leave the claim alone. */
  shouldExpand(pv: Readonly<V1PersistentVolume>): boolean {
    return this.#mode === 'shared' || volumeNode(pv) === this.#nodeName;
  }

  /**
   * Grows a volume. Without enforced sizes a directory has no size to change: the new capacity is
   * bookkeeping only, recorded on the PV and the claim by the controller. With them, the project's
   * limits are raised first.
   */
  async expand(options: ExpandOptions, context: OperationContext): Promise<ExpandResult> {
    const path = volumePath(options.pv);
    if (path === undefined) throw new Error('the volume has neither a hostPath nor a local source');
    const relative = relativePathUnder(this.#root.base, path);
    try {
      const bytes = quantityBytes(options.capacity);
      if (bytes === undefined) throw new InfeasibleError(`size ${options.capacity} is not a number of bytes`);
      const limits = projectLimits(bytes, parseClassParameters(options.storageClass.parameters));
      // A volume without a project has no size to raise: bookkeeping only.
      await this.#sizes.raiseLimit(relative, options.pv.metadata?.name ?? '', limits, context);
    } catch (err) {
      if (err instanceof InfeasibleError) return { error: err, state: 'Finished' };
      throw err;
    }
    return { capacity: options.capacity };
  }

  /** Measures the usage of the volumes this instance owns, when usage reporting is on. */
  async maintain(context: OperationContext): Promise<void> {
    if (this.#usage === undefined) return;
    const scope = {
      mode: this.#mode,
      provisionerName: this.#provisionerName,
      root: this.#root.base,
      nodeName: this.#nodeName,
    };
    const volumes = await listOwnedVolumes(this.#usage.volumes, scope, context);
    await this.#usage.monitor.refresh(volumes, context.signal, context.logger);
  }

  #checkPlacement(selectedNodeName: string): void {
    if (this.#mode === 'shared') return;
    if (selectedNodeName === '') {
      throw new InfeasibleError(
        'per-node mode needs a selected node: use a StorageClass with volumeBindingMode WaitForFirstConsumer',
      );
    }
    if (selectedNodeName !== this.#nodeName) {
      throw new IgnoredError(`the claim is for node ${selectedNodeName}`);
    }
  }

  #checkRequest(pvc: Readonly<V1PersistentVolumeClaim>): void {
    const modes = pvc.spec?.accessModes ?? [];
    if (modes.length === 0) throw new InfeasibleError('the claim requests no access mode');
    if (pvc.spec?.resources?.requests?.storage === undefined) {
      throw new InfeasibleError('the claim requests no storage size');
    }
    if (this.#mode === 'shared') return;
    const refused = modes.filter((mode) => !nodeLocalAccessModes.has(mode));
    if (refused.length > 0) {
      throw new InfeasibleError(
        `access mode ${refused.join(', ')} is not supported in per-node mode, where the data lives on one node: use ReadWriteOnce or ReadWriteOncePod`,
      );
    }
  }

  #volumePath(
    parameters: ClassParameters,
    pvc: Readonly<V1PersistentVolumeClaim>,
    pvName: string,
  ): RelativeVolumePath {
    const claim = {
      namespace: pvc.metadata?.namespace ?? '',
      name: pvc.metadata?.name ?? '',
      labels: pvc.metadata?.labels,
      annotations: pvc.metadata?.annotations,
    };
    const what = parameters.pathPattern === undefined ? 'PV name' : 'parameter "pathPattern"';
    try {
      // An empty fallback makes an empty render fail instead of silently using another name.
      return resolveVolumePath(
        parameters.pathPattern,
        { claim, pvName },
        parameters.pathPattern ? '' : pvName,
      );
    } catch (err) {
      throw new InfeasibleError(`${what} does not give a usable directory: ${(err as Error).message}`, {
        cause: err,
      });
    }
  }

  async #affinityValue(signal: AbortSignal): Promise<string> {
    const nodeName = this.#nodeName ?? '';
    if (this.#nodes === undefined) return nodeName;
    const node = await this.#nodes.get(nodeName, { signal });
    const value = node.metadata?.labels?.[this.#affinityKey];
    if (value !== undefined && value !== '') return value;
    if (this.#affinityKey === defaultNodeAffinityKey) return nodeName;
    throw new Error(`node ${nodeName} has no label ${this.#affinityKey} to use for node affinity`);
  }

  async #nodeVanished(node: string, signal: AbortSignal): Promise<boolean> {
    if (this.#nodes === undefined) return false;
    try {
      await this.#nodes.get(node, { signal });
      return false;
    } catch (err) {
      if (isNotFound(err)) return true;
      throw err;
    }
  }

  async #createDirectory(
    relative: RelativeVolumePath,
    options: ProvisionOptions,
    parameters: ClassParameters,
    context: OperationContext,
  ): Promise<string> {
    const path = joinBasePath(this.#root.base, relative);
    if (!parameters.enforceSize) {
      await this.#makeVolume(relative, options, parameters, undefined, context);
      return path;
    }
    const request = options.pvc.spec?.resources?.requests?.storage;
    const bytes = quantityBytes(request);
    if (bytes === undefined)
      throw new InfeasibleError(`the requested size ${request} is not a number of bytes`);
    // Before anything is made: a root that cannot enforce sizes gets no volume.
    const quotas = await this.#sizes.quotas();
    await this.#sizes.withNewProjectId(quotas, context.signal, (id) =>
      this.#makeVolume(relative, options, parameters, id, context),
    );
    await this.#sizes.enforce(relative, path, quotas, projectLimits(bytes, parameters), context);
    return path;
  }

  async #makeVolume(
    relative: RelativeVolumePath,
    { pvc, pvName }: ProvisionOptions,
    parameters: ClassParameters,
    projectId: number | undefined,
    context: OperationContext,
  ): Promise<void> {
    context.assertLeader();
    const outcome = await this.#root.createVolume(relative, {
      owner: {
        claimUid: pvc.metadata?.uid ?? '',
        namespace: pvc.metadata?.namespace ?? '',
        claimName: pvc.metadata?.name ?? '',
        pvName,
        provisioner: this.#provisionerName,
        ...(projectId === undefined ? {} : { projectId }),
      },
      mode: parameters.mode,
      // The class mode, but never writable by group or others: whoever can write a parent can swap
      // the volumes and records in it.
      parentMode: parameters.mode & ~0o022,
      // kubelet mounts hostPath volumes following links: a directory someone else made could have
      // the volume's path swapped for one.
      ownParentsOnly: true,
      uid: parameters.uid,
      gid: parameters.gid,
      beforeEachWrite: () => context.assertLeader(),
    });
    // A freeze during the call (a paused process, a lost Lease) ends the step here: the directory is
    // the claim's either way, and the new leader's retry reuses it; nothing more happens in this term.
    context.assertLeader();
    context.logger.info({ path: relative, outcome }, 'volume directory ready');
  }

  async #removeDirectory(
    relative: RelativeVolumePath,
    pv: Readonly<V1PersistentVolume>,
    context: OperationContext,
  ): Promise<void> {
    // The ownership record must name this PV, so a forged path cannot reach another volume.
    context.assertLeader();
    const outcome = await this.#root.deleteVolume(relative, {
      pvName: pv.metadata?.name ?? '',
      beforeEachWrite: () => context.assertLeader(),
    });
    context.assertLeader();
    context.logger.info({ path: relative, outcome }, 'volume directory removed');
  }
}
