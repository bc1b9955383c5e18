/**
 * Several named roots on one node (`--root fast=/mnt/nvme,bulk=/mnt/hdd`): one
 * {@link HostPathProvisioner} per root, and this in front of them. A new volume goes to the root of
 * its class with the most room (`root-placement.ts`); everything after that follows the PV's path,
 * the only record of its root, so no state outside the roots and the API server is needed.
 */
import {
  type ExpandOptions,
  type ExpandResult,
  InfeasibleError,
  type OperationContext,
  type Provisioner,
  type ProvisionOptions,
  type ProvisionResult,
  provisionFailure,
} from '@kube-provisioner/controller';
import { cloneSource } from '@kube-provisioner/controller/clone';
import type { DataSourceKind } from '@kube-provisioner/controller/provisioner';
import type { UsageMonitor, VolumeLister } from '@kube-provisioner/controller/usage';
import { type FsOps, isPersistentRefusal, normalizeBasePath, VolumeRoot } from '@kube-provisioner/safe-fs';
import type { V1PersistentVolume, V1PersistentVolumeClaim, V1StorageClass } from '@kubernetes/client-node';
import { type ClassParameters, parseClassParameters } from './class-parameters.ts';
import {
  defaultProvisionerName,
  HostPathProvisioner,
  type HostPathProvisionerOptions,
} from './hostpath-provisioner.ts';
import { NodePlacement } from './node-placement.ts';
import { type HostPathVolume, listOwnedVolumes } from './owned-volumes.ts';
import { defaultNodeAffinityKey, volumeNode, volumePath } from './persistent-volume.ts';
import { type RootCapacityReader, roomFor } from './root-capacity.ts';
import {
  checkRoots,
  chooseRoot,
  isUnder,
  type NamedRoot,
  noRootReason,
  rootsOfClass,
} from './root-placement.ts';
import { quantityBytes } from './storage-quantity.ts';
import { requestedTakeBack } from './take-back.ts';
import { volumeDirectory } from './volume-request.ts';

/** One root of a {@link RootSetProvisioner}. */
export interface RootOfSet extends NamedRoot {
  /** The root's capacity: where a new volume goes is decided by it. */
  readonly capacity: Pick<RootCapacityReader, 'read' | 'space'>;
  /** System calls used on this root. Default: the set's `fs`. */
  readonly fs?: FsOps | undefined;
}

/** A volume whose usage is measured, with the root its `path` is relative to. */
export interface RootSetVolume extends HostPathVolume {
  /** The root's directory. */
  readonly root: string;
}

/** What {@link RootSetProvisioner.setRoots} changed, by root path. */
export interface RootSetChange {
  /** Roots new volumes may now go to that they could not before. */
  readonly added: readonly string[];
  /** Roots new volumes no longer go to; their volumes are still served. */
  readonly retired: readonly string[];
}

/** Options of {@link RootSetProvisioner}: those of a per-node {@link HostPathProvisioner}, with roots. */
export interface RootSetProvisionerOptions
  extends Omit<
    HostPathProvisionerOptions,
    'mode' | 'root' | 'capacity' | 'usage' | 'snapshots' | 'nodeName'
  > {
  /** This node. */
  readonly nodeName: string;
  /**
   * The node's roots: names unique, none inside another. None is a node that takes no new volume
   * (a node roots file listing it without paths): its claims are rescheduled.
   */
  readonly roots: readonly RootOfSet[];
  /**
   * Roots that take no new volume but whose volumes are still served (a disk being emptied, marked
   * retired in the node roots file); checked together with {@link roots}.
   */
  readonly retiredRoots?: readonly RootOfSet[] | undefined;
  /** Usage reporting of the volumes on every root, as {@link HostPathProvisionerOptions.usage}. */
  readonly usage?:
    | { readonly monitor: UsageMonitor<RootSetVolume>; readonly volumes: VolumeLister }
    | undefined;
}

interface Member {
  /** The root as last configured (its name and labels may change, its path not). */
  root: RootOfSet;
  /** Whether new volumes may go to it: a root taken out of the configuration still serves its own. */
  placeable: boolean;
  readonly volumes: VolumeRoot;
  readonly provisioner: HostPathProvisioner;
}

/** A per-node provisioner over several named roots. */
export class RootSetProvisioner implements Provisioner {
  /** Every root this instance has served since it started, placeable or not. */
  readonly #members: Member[];
  readonly #placement: NodePlacement;
  readonly #options: RootSetProvisionerOptions;
  readonly dataSources: readonly DataSourceKind[];

  /** @throws Error for a malformed or repeated name, or a root inside another. */
  constructor(options: RootSetProvisionerOptions) {
    const roots = normalized(options.roots);
    const retired = normalized(options.retiredRoots ?? []);
    if (roots.length + retired.length > 0) checkRoots([...roots, ...retired]);
    this.#options = options;
    this.#placement = new NodePlacement(
      'per-node',
      options.nodeName,
      options.nodeAffinityKey ?? defaultNodeAffinityKey,
      options.nodes,
    );
    this.#members = [
      ...roots.map((root) => this.#member(root, true)),
      ...retired.map((root) => this.#member(root, false)),
    ];
    // Those of each root's provisioner: clones (snapshots are not taken per node).
    this.dataSources = options.clones === undefined ? [] : [{ apiGroup: '', kind: 'PersistentVolumeClaim' }];
  }

  /** The roots new volumes may go to now, in the order configured. */
  get placeableRoots(): readonly RootOfSet[] {
    return this.#placeable().map(({ root }) => root);
  }

  /**
   * Makes `roots` the ones new volumes go to, as a reloaded node roots file says, without a restart:
   * a new path becomes placeable, a kept path takes its new name and labels, and a path left out is
   * retired: no new volume goes there, but its volumes are still deleted, expanded and measured, so
   * none is orphaned. A retired path listed again is placeable again. `retiredRoots` are served
   * without taking new volumes, as the constructor's `retiredRoots`.
   *
   * @throws Error, changing nothing, for the constructor's reasons, or a root inside a retired one or
   * around it (a volume's path would then name two roots).
   */
  setRoots(roots: readonly RootOfSet[], retiredRoots: readonly RootOfSet[] = []): RootSetChange {
    const wanted = normalized(roots);
    const kept = normalized(retiredRoots);
    const given = [...wanted, ...kept];
    if (given.length > 0) checkRoots(given);
    const paths = new Set(wanted.map((root) => root.path));
    const givenPaths = new Set(given.map((root) => root.path));
    for (const member of this.#members) {
      if (givenPaths.has(member.root.path)) continue;
      for (const root of given) {
        if (isUnder(member.root.path, root.path) || isUnder(root.path, member.root.path)) {
          throw new Error(
            `root ${root.name} (${root.path}) and the retired root ${member.root.name} (${member.root.path}), which still serves its volumes, are one inside the other`,
          );
        }
      }
    }
    const before = new Set(this.placeableRoots.map((root) => root.path));
    for (const member of this.#members) member.placeable = false;
    for (const root of given) {
      const placeable = paths.has(root.path);
      const member = this.#members.find((known) => known.root.path === root.path);
      if (member === undefined) {
        this.#members.push(this.#member(root, placeable));
      } else {
        member.root = root;
        member.placeable = placeable;
      }
    }
    return {
      added: [...paths].filter((path) => !before.has(path)),
      retired: [...before].filter((path) => !paths.has(path)),
    };
  }

  /** A member for `root`, with its own provisioner. */
  #member(root: RootOfSet, placeable: boolean): Member {
    const fs = root.fs ?? this.#options.fs;
    // Each root's clone jobs count on the same clone metrics of the registry.
    const provisioner = new HostPathProvisioner({
      ...this.#options,
      mode: 'per-node',
      root: root.path,
      fs,
      usage: undefined,
      capacity: undefined,
    });
    return { root, placeable, volumes: new VolumeRoot(root.path, { fs }), provisioner };
  }

  #placeable(): Member[] {
    return this.#members.filter((member) => member.placeable);
  }

  shouldProvision(pvc: Readonly<V1PersistentVolumeClaim>): boolean {
    return this.#placement.takesClaim(pvc);
  }

  async provision(options: ProvisionOptions, context: OperationContext): Promise<ProvisionResult> {
    let member: Member | string;
    try {
      const parameters = parseClassParameters(options.storageClass.parameters);
      this.#placement.checkClaim(options.pvc, options.selectedNodeName);
      const placeable = this.placeableRoots;
      // No root at all is no reason to refuse the class: the claim goes to another node.
      const allowed = placeable.length === 0 ? [] : rootsOfClass(placeable, parameters.roots);
      member = await this.#memberFor(allowed, options, parameters, context);
    } catch (err) {
      return provisionFailure(err, isPersistentRefusal);
    }
    if (typeof member === 'string') return { error: new Error(member), state: 'Reschedule' };
    return member.provisioner.provision(
      { ...options, storageClass: withoutRoots(options.storageClass) },
      context,
    );
  }

  shouldDelete(pv: Readonly<V1PersistentVolume>, context: OperationContext): Promise<boolean> {
    return this.#placement.deletesVolume(pv, context.signal);
  }

  async delete(pv: Readonly<V1PersistentVolume>, context: OperationContext): Promise<void> {
    if ((await this.#placement.volumeToDelete(pv, context.signal)) === 'gone') {
      // Its disk is gone with the node, whatever roots it had: only the API object is left.
      context.logger.info({ node: volumeNode(pv) }, 'node no longer exists; skipping directory cleanup');
      return;
    }
    await this.#memberOf(pv).provisioner.delete(pv, context);
  }

  shouldExpand(pv: Readonly<V1PersistentVolume>): boolean {
    return this.#placement.expandsVolume(pv);
  }

  async expand(options: ExpandOptions, context: OperationContext): Promise<ExpandResult> {
    return await this.#memberOf(options.pv).provisioner.expand(options, context);
  }

  /** Measures the usage of the volumes on every root, when usage reporting is on. */
  async maintain(context: OperationContext): Promise<void> {
    const { usage } = this.#options;
    if (usage === undefined) return;
    const lists = await Promise.all(
      this.#members.map(async ({ root }) => {
        const scope = {
          mode: 'per-node' as const,
          provisionerName: this.#options.provisionerName ?? defaultProvisionerName,
          root: root.path,
          nodeName: this.#options.nodeName,
        };
        const owned = await listOwnedVolumes(usage.volumes, scope, context);
        return owned.map((volume): RootSetVolume => ({ ...volume, root: root.path }));
      }),
    );
    await usage.monitor.refresh(lists.flat(), context.signal, context.logger);
  }

  /**
   * The root of a claim's volume: the one where an earlier attempt made it; for a clone, its source's;
   * for a take-back, the one holding the data; else the one with the most room, or the reschedule
   * message when none has room.
   */
  async #memberFor(
    allowed: readonly RootOfSet[],
    options: ProvisionOptions,
    parameters: ClassParameters,
    context: OperationContext,
  ): Promise<Member | string> {
    const members = this.#members.filter(({ root }) => allowed.includes(root));
    const relative = volumeDirectory(parameters, options.pvc, options.pvName);
    // Any root, retired ones too: an attempt begun there is finished there, never left half-made.
    const made = await this.#find(this.#members, (member) =>
      member.volumes.readRecord(relative).then((record) => record?.pvName === options.pvName),
    );
    if (made !== undefined) return made;
    if (members.length === 0) {
      return `node ${this.#options.nodeName} has no root that takes new volumes (its node roots file lists none for it): rescheduling the claim`;
    }
    const { dataSource } = options;
    const clones = this.#options.clones;
    if (dataSource !== undefined) {
      // A clone is copied within its source's root; a kind this provisioner refuses is refused by a root's.
      if (dataSource.kind !== 'PersistentVolumeClaim' || dataSource.apiGroup !== '' || clones === undefined) {
        return members[0] as Member;
      }
      const provisionerName = this.#options.provisionerName ?? defaultProvisionerName;
      const { pv } = await cloneSource(clones, dataSource, options.pvc, provisionerName, context.signal);
      // A source on another node is refused by a root's provisioner, naming that node.
      if (volumeNode(pv) !== this.#options.nodeName) return members[0] as Member;
      const source = this.#memberOf(pv);
      if (!source.placeable) {
        throw new InfeasibleError(
          `the source volume ${pv.metadata?.name ?? ''} is on root ${source.root.name} (${source.root.path}), which the node roots file no longer lists, so it takes no new volume: a clone is copied within its source's root`,
        );
      }
      if (!members.includes(source)) {
        throw new InfeasibleError(
          `the source volume ${pv.metadata?.name ?? ''} is on root ${source.root.name}, which parameter "roots" of class ${options.storageClass.metadata?.name ?? ''} leaves out: a clone is copied within its source's root`,
        );
      }
      return source;
    }
    const fromPvName = requestedTakeBack(options.pvc, options.pvName);
    if (fromPvName !== undefined) {
      const holder = await this.#find(members, async (member) => {
        const found = await member.volumes.recordedVolumes(
          (record) => record.pvName === fromPvName || record.takenFrom === fromPvName,
          4,
        );
        return found.length > 0;
      });
      // Found nowhere: the first root's take-back says what is missing.
      return holder ?? (members[0] as Member);
    }
    return this.#roomiest(members, options, parameters, context);
  }

  async #roomiest(
    members: readonly Member[],
    options: ProvisionOptions,
    parameters: ClassParameters,
    context: OperationContext,
  ): Promise<Member | string> {
    const enforced = parameters.enforceSize;
    const rooms = await Promise.all(
      members.map(async (member) => {
        // Free space is one statfs; unreserved space also reads the volumes placed.
        const capacity = enforced
          ? await member.root.capacity.read(context)
          : await member.root.capacity.space();
        return { name: member.root.name, roomBytes: roomFor(capacity, enforced), member };
      }),
    );
    const requested = quantityBytes(options.pvc.spec?.resources?.requests?.storage) ?? 0;
    const chosen = chooseRoot(rooms, requested);
    if (chosen !== undefined) {
      context.logger.info({ root: chosen.name, roomBytes: chosen.roomBytes }, 'root chosen for the volume');
      return chosen.member;
    }
    return noRootReason(rooms, this.#options.nodeName, requested, enforced);
  }

  async #find(
    members: readonly Member[],
    test: (member: Member) => Promise<boolean>,
  ): Promise<Member | undefined> {
    const results = await Promise.all(members.map(test));
    return members.find((_, index) => results[index]);
  }

  /**
   * The root holding `pv`'s directory, by its path.
   *
   * @throws Error when the path is under none of the roots.
   */
  #memberOf(pv: Readonly<V1PersistentVolume>): Member {
    const path = volumePath(pv);
    if (path === undefined) throw new Error('the volume has neither a hostPath nor a local source');
    for (const member of this.#members) {
      if (isUnder(member.root.path, path)) return member;
    }
    const roots = this.#members.map(({ root }) => `${root.name}=${root.path}`).join(', ');
    throw new Error(`the volume's path ${path} is under none of this node's roots (${roots})`);
  }
}

/** `roots` with their paths normalised as the PVs' paths are written, so a path is matched to its root by prefix. */
function normalized(roots: readonly RootOfSet[]): RootOfSet[] {
  return roots.map((root) => ({ ...root, path: normalizeBasePath(root.path) }));
}

/** The class with its `roots` parameter taken out: each root's provisioner is that root alone. */
function withoutRoots(storageClass: Readonly<V1StorageClass>): V1StorageClass {
  const { roots: _roots, ...parameters } = storageClass.parameters ?? {};
  return { ...storageClass, parameters };
}
