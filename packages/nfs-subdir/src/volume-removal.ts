/**
 * What happens to a released PV's directory: deleted, archived or kept, as its recorded policy (or,
 * for the upstream programs' PVs, its class) says. The export itself and another server's paths are
 * never touched, and the upstream programs' nested volumes are archived rather than deleted unless
 * the operator opted in.
 */
import { type OperationContext, VolumeInUseError } from '@kube-provisioner/controller';
import { parseGoDuration } from '@kube-provisioner/controller/cli';
import { isSafeFsError, type RelativeVolumePath, type VolumeRoot } from '@kube-provisioner/safe-fs';
import type { V1PersistentVolume } from '@kubernetes/client-node';
import type { NfsDialect } from './class-parameters.ts';
import { annArchiveRetention, annOnDelete } from './delete-policy.ts';
import { isHeldOpenFile } from './nfs-error-advice.ts';
import type { NfsExport } from './nfs-export.ts';
import { type StorageClassReader, volumeDeletePolicy } from './volume-delete-policy.ts';
import { reasonArchivedNotDeleted, reasonExportRootKept, type VolumeEventSink } from './volume-events.ts';

/** What {@link removeVolume} works with: the provisioner's export, mount and settings. */
export interface VolumeRemoval {
  readonly nfsExport: NfsExport;
  readonly root: VolumeRoot;
  readonly dialect: NfsDialect;
  readonly classes: StorageClassReader;
  /** Delete the upstream programs' nested volumes (no record) when their class says delete. */
  readonly deleteUnrecordedNested: boolean;
  /** Retention of archives whose PV records none, in ms; `undefined` keeps them forever. */
  readonly archiveRetentionMs: number | undefined;
  readonly events: VolumeEventSink | undefined;
  /** Adds the cause and the fix to a refusal of the mount (root_squash, permissions…). */
  readonly explainRefusal: (err: unknown) => unknown;
}

/** Deletes, archives or keeps the directory of released `pv`, fenced by the leadership term. */
export async function removeVolume(
  removal: VolumeRemoval,
  pv: Readonly<V1PersistentVolume>,
  context: OperationContext,
): Promise<void> {
  const { nfsExport, root, events, explainRefusal } = removal;
  if (nfsExport.isExportItself(pv)) {
    const message = `the volume's path is the export ${nfsExport.path} itself (nfs-subdir-external-provisioner v4.0.2 made such PVs when a pathPattern rendered empty); the export and all it holds are kept, only the PV goes`;
    // Events are side effects too: like the controller's, none once the term ended.
    context.assertLeader();
    context.logger.warn({ path: nfsExport.path }, message);
    events?.event(
      { apiVersion: 'v1', kind: 'PersistentVolume', ...pv },
      'Warning',
      reasonExportRootKept,
      message,
    );
    return;
  }
  const { policy, source } = await volumeDeletePolicy(pv, removal.dialect, removal.classes, context);
  const pvName = pv.metadata?.name ?? '';
  if (policy === 'retain') {
    await release(removal, pv, pvName, context);
    return;
  }
  const relative = nfsExport.directoryOf(pv);
  context.signal.throwIfAborted();
  const keep = policy === 'delete' && source === 'legacy' && (await isUnrecordedNested(removal, relative));
  if (policy === 'delete' && !keep) {
    const outcome = await root
      .deleteVolume(relative, { pvName, beforeEachWrite: () => context.assertLeader() })
      .catch((err: unknown) => {
        const explained = explainRefusal(err);
        // A file a process of this NFS client holds open: postponed, not failed, until it is closed.
        throw isHeldOpenFile(err)
          ? new VolumeInUseError((explained as Error).message, { cause: err })
          : explained;
      });
    context.assertLeader();
    context.logger.info({ path: relative, outcome }, 'volume directory deleted');
    return;
  }
  const result = await root
    .archiveVolume(relative, {
      pvName,
      retentionMs: retentionOf(removal, pv),
      beforeEachWrite: () => context.assertLeader(),
    })
    .catch((err: unknown) => {
      throw explainRefusal(err);
    });
  context.assertLeader();
  const to = result.outcome === 'archived' ? result.archivedPath : undefined;
  context.logger.info({ path: relative, outcome: result.outcome, to }, 'volume directory archived');
  if (keep && to !== undefined) {
    const message = unrecordedNestedArchived(relative, to);
    context.logger.warn({ path: relative, to }, message);
    events?.event(
      { apiVersion: 'v1', kind: 'PersistentVolume', ...pv },
      'Warning',
      reasonArchivedNotDeleted,
      message,
    );
  }
}

function unrecordedNestedArchived(path: string, archivedPath: string): string {
  return `archived ${path} as ${archivedPath} instead of deleting it: the volume was made by nfs-subdir-external-provisioner with a nested pathPattern, which v4.0.2 never deleted, so its data is kept; to delete such volumes, start the provisioner with --delete-unrecorded-nested=true (DELETE_UNRECORDED_NESTED=true), or annotate the PV with ${annOnDelete}=delete before deleting its claim`;
}

/**
 * How long an archive of `pv` is kept: the retention recorded on it at provision time, else the
 * provisioner's default; `undefined` keeps it forever. A recorded value that no longer parses
 * (edited by hand) keeps it forever too, the safe reading.
 */
function retentionOf(removal: VolumeRemoval, pv: Readonly<V1PersistentVolume>): number | undefined {
  const recorded = pv.metadata?.annotations?.[annArchiveRetention];
  if (recorded === undefined) return removal.archiveRetentionMs;
  const ms = parseGoDuration(recorded);
  return ms !== undefined && ms > 0 ? ms : undefined;
}

/**
 * Whether `relative` is a nested volume without an ownership record, which only the upstream
 * programs make: v4.0.2 looked for it at the export's top level, never found it and kept it, so
 * deleting it now would destroy data that survived before the switch (unless the operator opted in).
 */
async function isUnrecordedNested(removal: VolumeRemoval, relative: RelativeVolumePath): Promise<boolean> {
  if (removal.deleteUnrecordedNested || !relative.includes('/')) return false;
  return (await removal.root.readRecord(relative)) === undefined;
}

/**
 * Keeps the directory and marks its record released, so that a re-created claim of the same
 * namespace can adopt the data (`adoptExisting`). Retaining never touches the data, so a PV whose
 * path is not ours, or a directory that refuses the mark, still lets the PV go: only the reattach
 * is lost, and the warning says so. System errors are retried, as they may pass.
 */
async function release(
  removal: VolumeRemoval,
  pv: Readonly<V1PersistentVolume>,
  pvName: string,
  context: OperationContext,
): Promise<void> {
  const policy = 'retain';
  let relative: RelativeVolumePath;
  try {
    relative = removal.nfsExport.directoryOf(pv);
  } catch (err) {
    context.logger.warn({ policy, err }, 'keeping the volume, which is not a directory of this export');
    return;
  }
  context.signal.throwIfAborted();
  try {
    const outcome = await removal.root.releaseVolume(relative, {
      pvName,
      beforeEachWrite: () => context.assertLeader(),
    });
    context.assertLeader();
    context.logger.info({ policy, path: relative, outcome }, 'keeping the volume directory');
  } catch (err) {
    if (!isSafeFsError(err) || err.kind === 'io' || err.kind === 'permission') throw err;
    context.logger.warn(
      { policy, path: relative, err },
      'keeping the volume directory, but could not mark it released: a new claim cannot adopt it',
    );
  }
}
