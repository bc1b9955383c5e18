/**
 * The NFS {@link Provisioner} of both dialects: one directory per claim under the mounted export,
 * returned as an `nfs` PV. All filesystem work goes through `@kube-provisioner/safe-fs`, so no path
 * derived from a claim or a PV can leave the export or follow a link planted in it.
 */
import {
  annBetaStorageClass,
  InfeasibleError,
  isNotFound,
  type OperationContext,
  type Provisioner,
  type ProvisionOptions,
  type ProvisionResult,
  provisionFailure,
  type ResourceClient,
} from '@kube-provisioner/controller';
import {
  explainPermissionError,
  type FsOps,
  isPersistentRefusal,
  isSafeFsError,
  joinBasePath,
  normalizeBasePath,
  parseRelativeVolumePath,
  type RelativeVolumePath,
  relativePathUnder,
  resolveVolumePath,
  VolumeRoot,
} from '@kube-provisioner/safe-fs';
import type { V1PersistentVolume, V1PersistentVolumeClaim, V1StorageClass } from '@kubernetes/client-node';
import {
  type ClassParameters,
  legacyDeletePolicy,
  type NfsDialect,
  parseClassParameters,
} from './class-parameters.ts';
import { type DeletePolicy, recordedDeletePolicy } from './delete-policy.ts';
import { buildPersistentVolume } from './persistent-volume.ts';

/** Reads StorageClasses (`storageclasses` `get`); a `ResourceClient<V1StorageClass>` fits. */
export type StorageClassReader = Pick<ResourceClient<V1StorageClass>, 'get'>;

/** Where the export is mounted in the provisioner's container, as upstream. */
export const defaultMountRoot = '/persistentvolumes';

/** Options of {@link NfsProvisioner}. */
export interface NfsProvisionerOptions {
  readonly dialect: NfsDialect;
  /** `NFS_SERVER`, written into every PV. */
  readonly server: string;
  /** `NFS_PATH`, the exported path on the server; normalised (`/`, trailing and doubled slashes). */
  readonly exportPath: string;
  /** Where that export is mounted here. Default {@link defaultMountRoot}. */
  readonly mountRoot?: string | undefined;
  /** `PROVISIONER_NAME`, recorded in each directory's ownership record. */
  readonly provisionerName: string;
  /** Used only to delete PVs made by the upstream programs, which record no delete policy. */
  readonly classes: StorageClassReader;
  /** System calls on the mount root; tests inject failures here. Default: the real ones. */
  readonly fs?: FsOps | undefined;
}

// Upstream's mode: every claim's workload, whatever its UID, can write its directory.
const directoryMode = 0o777;

/** Provisions and deletes directories of one NFS export. */
export class NfsProvisioner implements Provisioner {
  readonly #dialect: NfsDialect;
  readonly #server: string;
  readonly #exportPath: string;
  readonly #provisionerName: string;
  readonly #root: VolumeRoot;
  readonly #classes: StorageClassReader;

  /** @throws Error when the server or provisioner name is empty, or a path is not absolute. */
  constructor(options: NfsProvisionerOptions) {
    if (options.server === '') throw new Error('the NFS server must not be empty');
    if (options.provisionerName === '') throw new Error('the provisioner name must not be empty');
    this.#dialect = options.dialect;
    this.#server = options.server;
    this.#exportPath = normalizeBasePath(options.exportPath);
    this.#provisionerName = options.provisionerName;
    this.#root = new VolumeRoot(options.mountRoot ?? defaultMountRoot, { fs: options.fs });
    this.#classes = options.classes;
  }

  async provision(options: ProvisionOptions, context: OperationContext): Promise<ProvisionResult> {
    try {
      const { pvc, storageClass, pvName } = options;
      const parameters = parseClassParameters(this.#dialect, storageClass.parameters);
      if (pvc.spec?.selector !== undefined && pvc.spec.selector !== null) {
        throw new InfeasibleError('claim Selector is not supported');
      }
      const relative = this.#volumePath(parameters, pvc, pvName);
      context.signal.throwIfAborted();
      const outcome = await this.#root.createVolume(relative, {
        owner: {
          claimUid: pvc.metadata?.uid ?? '',
          namespace: pvc.metadata?.namespace ?? '',
          claimName: pvc.metadata?.name ?? '',
          pvName,
          provisioner: this.#provisionerName,
        },
        mode: directoryMode,
        adopt: parameters.adoptExisting,
      });
      context.logger.info({ path: relative, outcome }, 'volume directory ready');
      const path = joinBasePath(this.#exportPath, relative);
      return {
        pv: buildPersistentVolume({
          pvName,
          pvc,
          storageClass,
          server: this.#server,
          path,
          onDelete: parameters.onDelete,
        }),
      };
    } catch (err) {
      // Bad paths and permission refusals slow the retries down; ownership and symlink refusals
      // stay plain errors with an event. A permission refusal's event says how to fix it.
      return provisionFailure(explainPermissionError(err, this.#root.base), isPersistentRefusal);
    }
  }

  async delete(pv: Readonly<V1PersistentVolume>, context: OperationContext): Promise<void> {
    const policy = await this.#deletePolicy(pv, context);
    const pvName = pv.metadata?.name ?? '';
    if (policy === 'retain') {
      await this.#release(pv, pvName, context);
      return;
    }
    const relative = this.#pathOf(pv);
    context.signal.throwIfAborted();
    if (policy === 'delete') {
      const outcome = await this.#root.deleteVolume(relative, { pvName });
      context.logger.info({ path: relative, outcome }, 'volume directory deleted');
      return;
    }
    const result = await this.#root.archiveVolume(relative, { pvName });
    context.logger.info(
      {
        path: relative,
        outcome: result.outcome,
        ...(result.outcome === 'archived' ? { to: result.archivedPath } : {}),
      },
      'volume directory archived',
    );
  }

  /**
   * Keeps the directory and marks its record released, so that a re-created claim of the same
   * namespace can adopt the data (`adoptExisting`). Retaining never touches the data, so a PV whose
   * path is not ours, or a directory that refuses the mark, still lets the PV go: only the reattach
   * is lost, and the warning says so. System errors are retried, as they may pass.
   */
  async #release(pv: Readonly<V1PersistentVolume>, pvName: string, context: OperationContext): Promise<void> {
    const policy = 'retain';
    let relative: RelativeVolumePath;
    try {
      relative = this.#pathOf(pv);
    } catch (err) {
      context.logger.warn({ policy, err }, 'keeping the volume, which is not a directory of this export');
      return;
    }
    context.signal.throwIfAborted();
    try {
      const outcome = await this.#root.releaseVolume(relative, { pvName });
      context.logger.info({ policy, path: relative, outcome }, 'keeping the volume directory');
    } catch (err) {
      if (!isSafeFsError(err) || err.kind === 'io' || err.kind === 'permission') throw err;
      context.logger.warn(
        { policy, path: relative, err },
        'keeping the volume directory, but could not mark it released: a new claim cannot adopt it',
      );
    }
  }

  #volumePath(
    parameters: ClassParameters,
    pvc: Readonly<V1PersistentVolumeClaim>,
    pvName: string,
  ): RelativeVolumePath {
    const namespace = pvc.metadata?.namespace ?? '';
    const name = pvc.metadata?.name ?? '';
    const defaultName = `${namespace}-${name}-${pvName}`;
    const what = parameters.pathPattern === undefined ? 'the directory name' : 'parameter "pathPattern"';
    try {
      if (parameters.pathPattern === undefined) return parseRelativeVolumePath(defaultName);
      const claim = { namespace, name, labels: pvc.metadata?.labels, annotations: pvc.metadata?.annotations };
      return resolveVolumePath(parameters.pathPattern, { claim, pvName }, defaultName);
    } catch (err) {
      throw new InfeasibleError(`${what} does not give a usable directory: ${(err as Error).message}`, {
        cause: err,
      });
    }
  }

  /**
   * The volume directory of `pv`, relative to the mount root. The PV is trusted no more than a
   * claim (R5): it must name our server and a path strictly below the export.
   */
  #pathOf(pv: Readonly<V1PersistentVolume>): RelativeVolumePath {
    const nfs = pv.spec?.nfs;
    if (nfs === undefined) throw new Error('the volume has no nfs source; refusing to touch anything');
    if (nfs.server !== this.#server) {
      throw new Error(
        `the volume is on NFS server ${JSON.stringify(nfs.server)}, not ${JSON.stringify(this.#server)}; refusing to touch anything`,
      );
    }
    return relativePathUnder(this.#exportPath, nfs.path);
  }

  /**
   * The policy recorded at provision time; for PVs of the upstream programs, which record none, the
   * one upstream would read from the live StorageClass.
   */
  async #deletePolicy(pv: Readonly<V1PersistentVolume>, context: OperationContext): Promise<DeletePolicy> {
    const recorded = recordedDeletePolicy(pv);
    if (recorded === 'invalid') {
      context.logger.warn(
        { policy: 'archive' },
        'unknown recorded delete policy; archiving to keep the data',
      );
      return 'archive';
    }
    if (recorded !== undefined) return recorded;
    const className = storageClassOf(pv);
    if (className === '') {
      throw new Error(
        'the volume records no delete policy and names no StorageClass to read one from; annotate it with the policy to apply',
      );
    }
    let storageClass: V1StorageClass;
    try {
      storageClass = await this.#classes.get(className, { signal: context.signal });
    } catch (err) {
      if (!isNotFound(err)) throw err;
      throw new Error(
        `the volume records no delete policy (made by an upstream provisioner) and its StorageClass ${JSON.stringify(className)} no longer exists; re-create the class or annotate the volume with the policy to apply`,
        { cause: err },
      );
    }
    const { policy, problem } = legacyDeletePolicy(this.#dialect, storageClass.parameters);
    if (problem !== undefined) {
      context.logger.warn({ StorageClass: className, policy }, `${problem}; archiving to keep the data`);
    }
    return policy;
  }
}

/** The class a PV names: the beta annotation, as nfs-client read it, else `spec.storageClassName`. */
function storageClassOf(pv: Readonly<V1PersistentVolume>): string {
  return pv.metadata?.annotations?.[annBetaStorageClass] || pv.spec?.storageClassName || '';
}
