/**
 * Supplemental GIDs per volume, a port of the Go library's `gidallocator` and `allocator` packages:
 * a class sets `gidMin`/`gidMax`, each PV gets a GID of that range no other PV of the class has, in
 * the annotation `pv.beta.kubernetes.io/gid`, and kubelet adds it to the groups of every pod that
 * mounts the volume. The provisioner makes the volume's group that GID, so non-root pods can write
 * where `fsGroup` does not apply (NFS). Unlike Go, the taken GIDs are read from the saved PVs at
 * each allocation, so a new leader never hands out a GID its predecessor got saved.
 *
 * Stability: experimental (see "Versioning" in the repository README).
 *
 * @experimental
 *
 * @packageDocumentation
 */
export type { GidAllocatorOptions, GidRequest, PersistentVolumeLister } from './gid-allocator.ts';
export { GidAllocator, volumeGid } from './gid-allocator.ts';
export type { GidRange } from './gid-range.ts';
export {
  annVolumeGid,
  defaultGidMax,
  defaultGidMin,
  GidParameterError,
  hasGidParameters,
  isGidParameter,
  parseGid,
  parseGidRange,
} from './gid-range.ts';
export type { RangeAllocatorErrorKind } from './min-max-allocator.ts';
export { MinMaxAllocator, RangeAllocatorError } from './min-max-allocator.ts';
