/**
 * A real Kubernetes control plane (etcd, kube-apiserver, controller manager, scheduler) built from Go
 * modules, fake and real nodes, an NFS server and the helpers an end-to-end test uses on them.
 *
 * Stability: stable (see "Versioning" in the repository README), except what it exports for this
 * repository's own tooling (image builds, the guest image, the node build), which is internal.
 *
 * @packageDocumentation
 */
export { type AccessQuestion, isAllowed } from './access-review.ts';
export { type Binaries, defaultCacheRoot, type EnsureBinariesOptions, ensureBinaries } from './binaries.ts';
export { bindClaim, type ClaimSpec, createClaims, deleteClaimAndVolume } from './claims.ts';
export { MissingToolError } from './command.ts';
export {
  attachControlPlane,
  type ControlPlane,
  ControlPlaneStartError,
  type StartControlPlaneOptions,
  startControlPlane,
} from './control-plane.ts';
export { createFakeNode, type FakeNodeOptions } from './fake-node.ts';
export { freePorts } from './free-ports.ts';
export {
  type Guest,
  GuestBootError,
  type GuestNfsEndpoint,
  type GuestShellOptions,
  type StartGuestOptions,
  startGuest,
} from './guest/guest.ts';
export {
  defaultGuestCacheDir,
  type EnsureGuestImageOptions,
  ensureGuestImage,
  type GuestImage,
} from './guest/guest-image.ts';
export { guestUser } from './guest/guest-init.ts';
export { defaultNfsMountOptions, type GuestNfsMount, mountNfs } from './guest/guest-nfs-mount.ts';
export {
  GuestToolsMissingError,
  guestAptPackages,
  guestUnsupportedReason,
  missingGuestPackages,
} from './guest/guest-prerequisites.ts';
export type { GuestProgram, GuestProgramOptions, GuestRunResult } from './guest/guest-programs.ts';
export {
  createQuotaFileSystem,
  type DirectorySpace,
  type QuotaFileSystem,
  type QuotaFileSystemOptions,
  type QuotaFileSystemType,
} from './guest/guest-quota.ts';
export { type NfsOperationStats, nfsMountStats, parseNfsMountStats } from './guest/nfs-mount-stats.ts';
export { type HelmBinaryOptions, helmBinary } from './helm.ts';
export {
  type BaseImage,
  baseImage,
  type EnsureBaseImageOptions,
  ensureBaseImage,
} from './images/base-image.ts';
export { type BundleOptions, type BundleResult, bundleProgram } from './images/bundle.ts';
export {
  type BindMount,
  fetchInside,
  type InsideResponse,
  type RunningContainer,
  type StartContainerOptions,
  startContainer,
} from './images/container.ts';
export { formatImageSize, imageSize } from './images/podman.ts';
export {
  type BuildImageOptions,
  type BuiltImage,
  buildProjectImage,
  ensureProjectImage,
  type ProjectImage,
  projectImage,
  projectImages,
} from './images/project-images.ts';
export { listNfsDirectory, type NfsLocation, nfsUrl, readNfsFile, writeNfsFile } from './libnfs.ts';
export {
  type ApplyManifestsOptions,
  applyManifests,
  describeObject,
  renderKustomization,
} from './manifests.ts';
export {
  type NfsProvisionerUnderTest,
  reachVolumeOverNfs,
  type StartNfsProvisionerOptions,
  startNfsProvisioner,
} from './nfs-provisioner-process.ts';
export {
  type NfsServer,
  NfsServerStartError,
  type StartNfsServerOptions,
  startNfsServer,
} from './nfs-server.ts';
export { missingNfsPackages, NfsToolsMissingError, nfsAptPackages } from './nfs-tools.ts';
export {
  type EnsureNodeBinariesOptions,
  ensureNodeBinaries,
  type NodeBinaries,
} from './node/node-binaries.ts';
export { defaultPodNetwork, type PodNetwork } from './node/node-config.ts';
export type { NodeProcessName } from './node/node-processes.ts';
export {
  attachRealNode,
  type RealNode,
  RealNodeStartError,
  RealNodeUnavailableError,
  type StartRealNodeOptions,
  startRealNode,
  stopRealNode,
} from './node/real-node.ts';
export { createLoopbackServingPair, type LoopbackServingPair } from './pki.ts';
export {
  type ProgramCommand,
  type RunningProgram,
  type StartProgramOptions,
  startProgram,
  workspaceBinCommand,
} from './program-process.ts';
export {
  mintServiceAccountKubeconfig,
  type ServiceAccountKubeconfig,
  type ServiceAccountKubeconfigOptions,
} from './service-account-kubeconfig.ts';
export type { ComponentName } from './state-dir.ts';
/** Version of this package, read from its manifest. */
export { version } from './version.ts';
export { pinnedNodeVersions, pinnedVersions } from './versions.ts';
export { stopWaiting, type WaitForOptions, waitFor } from './wait-for.ts';
