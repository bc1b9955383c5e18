/**
 * The UML guest, for a test that asks for a real Linux kernel: boot it, run programs in it as root or
 * as an unprivileged user, mount NFS exports, make quota file systems and read NFS client statistics.
 * `useGuest` and `guestAvailable` in `/testing` start it for a vitest file and say when it can run.
 *
 * Stability: experimental (see "Versioning" in the repository README): it rests on UML and the host's
 * kernel features, and may change in a minor release.
 *
 * @experimental
 *
 * @packageDocumentation
 */
export {
  type Guest,
  GuestBootError,
  type GuestNfsEndpoint,
  type GuestShellOptions,
  type StartGuestOptions,
  startGuest,
} from './guest/guest.ts';
export type { EnsureGuestImageOptions, GuestImage } from './guest/guest-image.ts';
export { guestUser } from './guest/guest-init.ts';
export { type GuestNfsMount, mountNfs } from './guest/guest-nfs-mount.ts';
export type { GuestProgram, GuestProgramOptions, GuestRunResult } from './guest/guest-programs.ts';
export {
  createQuotaFileSystem,
  type DirectorySpace,
  type QuotaFileSystem,
  type QuotaFileSystemOptions,
  type QuotaFileSystemType,
} from './guest/guest-quota.ts';
export { type NfsOperationStats, nfsMountStats } from './guest/nfs-mount-stats.ts';
