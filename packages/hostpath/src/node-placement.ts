/**
 * Which claims and volumes a hostpath instance serves. In shared mode, all of them. In per-node
 * mode, only claims scheduled to its own node and volumes recorded on it, plus the released volumes
 * of a node that no longer exists; everything else belongs to a peer and is left alone, silently.
 */
import { IgnoredError, InfeasibleError } from '@kube-provisioner/controller';
import { isNotFound, type ResourceClient } from '@kube-provisioner/controller/client';
import { annAlphaSelectedNode, annSelectedNode } from '@kube-provisioner/controller/wire-names';
import type { V1Node, V1PersistentVolume, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { defaultNodeAffinityKey, volumeNode } from './persistent-volume.ts';
import type { ProvisionerMode } from './provisioner-mode.ts';

/** Reads Node objects (`nodes` `get`); a `ResourceClient<V1Node>` fits. */
export type NodeReader = Pick<ResourceClient<V1Node>, 'get'>;

// Per-node volumes live on one node, so only single-node access modes make sense.
const nodeLocalAccessModes: ReadonlySet<string> = new Set(['ReadWriteOnce', 'ReadWriteOncePod']);

/** An instance's node rules: which claims it takes, which volumes it deletes or expands. */
export class NodePlacement {
  readonly #mode: ProvisionerMode;
  readonly #nodeName: string | undefined;
  readonly #affinityKey: string;
  readonly #nodes: NodeReader | undefined;

  constructor(mode: ProvisionerMode, nodeName: string | undefined, affinityKey: string, nodes?: NodeReader) {
    this.#mode = mode;
    this.#nodeName = nodeName;
    this.#affinityKey = affinityKey;
    this.#nodes = nodes;
  }

  /** Whether `pvc` is this instance's to provision (a claim without a selected node gets through to be explained). */
  takesClaim(pvc: Readonly<V1PersistentVolumeClaim>): boolean {
    if (this.#mode === 'shared') return true;
    const annotations = pvc.metadata?.annotations ?? {};
    const selected = annotations[annSelectedNode] || annotations[annAlphaSelectedNode] || '';
    return selected === '' || selected === this.#nodeName;
  }

  /**
   * Checks that a claim can be provisioned here: scheduled to this node (per-node mode), with an
   * access mode and a size, and only single-node access modes per node.
   *
   * @throws InfeasibleError for a claim no instance can serve; IgnoredError for a peer's claim.
   */
  checkClaim(pvc: Readonly<V1PersistentVolumeClaim>, selectedNodeName: string): void {
    if (this.#mode === 'per-node') {
      if (selectedNodeName === '') {
        throw new InfeasibleError(
          'per-node mode needs a selected node: use a StorageClass with volumeBindingMode WaitForFirstConsumer',
        );
      }
      if (selectedNodeName !== this.#nodeName)
        throw new IgnoredError(`the claim is for node ${selectedNodeName}`);
    }
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

  /** The PV's node affinity in per-node mode: the affinity label's value on this node. */
  async nodeAffinity(signal: AbortSignal): Promise<{ key: string; value: string } | undefined> {
    if (this.#mode === 'shared') return undefined;
    const nodeName = this.#nodeName ?? '';
    if (this.#nodes === undefined) return { key: this.#affinityKey, value: nodeName };
    const node = await this.#nodes.get(nodeName, { signal });
    const value = node.metadata?.labels?.[this.#affinityKey];
    if (value !== undefined && value !== '') return { key: this.#affinityKey, value };
    if (this.#affinityKey === defaultNodeAffinityKey) return { key: this.#affinityKey, value: nodeName };
    throw new Error(`node ${nodeName} has no label ${this.#affinityKey} to use for node affinity`);
  }

  /** Whether this instance deletes `pv`: its own node's, or a released one of a vanished node. */
  async deletesVolume(pv: Readonly<V1PersistentVolume>, signal: AbortSignal): Promise<boolean> {
    if (this.#mode === 'shared') return true;
    const node = volumeNode(pv);
    if (node === this.#nodeName) return true;
    // Only released volumes of a foreign node are worth a Node lookup.
    const releasable = pv.status?.phase === 'Released' && pv.spec?.persistentVolumeReclaimPolicy === 'Delete';
    return node !== undefined && releasable && (await this.#nodeVanished(node, signal));
  }

  /**
   * Where `pv`'s directory is for a delete: `here`, or `gone` with its vanished node (nothing left
   * to remove).
   *
   * @throws IgnoredError for a peer's volume.
   */
  async volumeToDelete(pv: Readonly<V1PersistentVolume>, signal: AbortSignal): Promise<'here' | 'gone'> {
    const node = volumeNode(pv);
    if (this.#mode === 'shared' || node === this.#nodeName) return 'here';
    if (node !== undefined && (await this.#nodeVanished(node, signal))) return 'gone';
    throw new IgnoredError(
      node === undefined ? 'the volume records no node' : `the volume is on node ${node}`,
    );
  }

  /** In per-node mode only the volume's own node expands it; the others leave the claim alone. */
  expandsVolume(pv: Readonly<V1PersistentVolume>): boolean {
    return this.#mode === 'shared' || volumeNode(pv) === this.#nodeName;
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
}
