/**
 * The export a provisioner serves, as PVs name it (`spec.nfs.server` and `spec.nfs.path`): maps a
 * volume directory to the path its PV carries, and a PV back to its directory, trusting the PV no
 * more than a claim.
 */
import {
  joinBasePath,
  normalizeBasePath,
  type RelativeVolumePath,
  relativePathUnder,
} from '@kube-provisioner/safe-fs';
import type { V1PersistentVolume } from '@kubernetes/client-node';

/** One NFS export: its server and its exported path. */
export class NfsExport {
  /** `NFS_SERVER`, written into every PV. */
  readonly server: string;
  /** `NFS_PATH`, normalised (`/`, trailing and doubled slashes). */
  readonly path: string;

  /** @throws Error when the server is empty or the path is not absolute. */
  constructor(server: string, path: string) {
    if (server === '') throw new Error('the NFS server must not be empty');
    this.server = server;
    this.path = normalizeBasePath(path);
  }

  /** The `spec.nfs.path` of the volume directory `relative`. */
  pvPath(relative: RelativeVolumePath): string {
    return joinBasePath(this.path, relative);
  }

  /**
   * The volume directory of `pv`, relative to the export.
   *
   * @throws Error when `pv` is not an `nfs` PV of this server, or its path is not strictly below the
   * export.
   */
  directoryOf(pv: Readonly<V1PersistentVolume>): RelativeVolumePath {
    const nfs = pv.spec?.nfs;
    if (nfs === undefined) throw new Error('the volume has no nfs source; refusing to touch anything');
    if (nfs.server !== this.server) {
      throw new Error(
        `the volume is on NFS server ${JSON.stringify(nfs.server)}, not ${JSON.stringify(this.server)}; refusing to touch anything`,
      );
    }
    return relativePathUnder(this.path, nfs.path);
  }

  /** Whether `pv` names this server and the export itself, which is never deleted or archived. */
  isExportItself(pv: Readonly<V1PersistentVolume>): boolean {
    const nfs = pv.spec?.nfs;
    if (nfs?.server !== this.server) return false;
    try {
      return normalizeBasePath(nfs.path) === this.path;
    } catch {
      return false;
    }
  }
}
