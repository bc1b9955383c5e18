/** The Events the NFS provisioner records about volumes and claims, beside the controller's own. */
import type { EventRecorder } from '@kube-provisioner/controller/events';

/** Records an Event about a PV or a claim. */
export type VolumeEventSink = Pick<EventRecorder, 'event'>;

/** Event reason when a claim takes over an existing directory (`adoptExisting`). */
export const reasonAdopted = 'VolumeAdopted';

/** Event reason when a PV naming the whole export is let go, the export untouched. */
export const reasonExportRootKept = 'VolumeExportRootKept';

/** Event reason when an unrecorded nested volume is archived although its class says delete. */
export const reasonArchivedNotDeleted = 'VolumeArchivedNotDeleted';
