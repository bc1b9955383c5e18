/**
 * What testenv exports for this repository's own tooling (tests of the other packages, the benchmark
 * and chaos suites, the examples and scripts): image builds and containers, program bundling, the Go
 * tool cache, helm, NFS prerequisites, RBAC access reviews, ServiceAccount kubeconfigs, kustomize
 * rendering, free ports and a loopback TLS pair. Not for use outside the repository.
 *
 * Stability: internal (see "Versioning" in the repository README): no promise; any release may change
 * or remove any of it.
 *
 * @packageDocumentation
 */
export { type AccessQuestion, isAllowed } from './access-review.ts';
export { defaultCacheRoot, type EnsureBinariesOptions } from './binaries.ts';
export { freePorts } from './free-ports.ts';
export { type HelmBinaryOptions, helmBinary } from './helm.ts';
export { type BundleOptions, type BundleResult, bundleProgram } from './images/bundle.ts';
export {
  type BindMount,
  fetchInside,
  type InsideResponse,
  type RunningContainer,
  type StartContainerOptions,
  startContainer,
} from './images/container.ts';
export { arm64EmulationAvailable, ensureArm64Emulation } from './images/emulation.ts';
export type { RuntimeExtras } from './images/foreign-rootfs.ts';
export { checkVersionAndHelp } from './images/image-version-and-help.ts';
export {
  architectureTag,
  type BuildImageOptions,
  type BuiltImage,
  ensureProjectImage,
  type ImageArchitecture,
  imageArchitectures,
  type ProjectImage,
  projectImage,
  writeManifestList,
} from './images/project-images.ts';
export { nfsUrl } from './libnfs.ts';
export { renderKustomization } from './manifests.ts';
export { type ExampleDeployment, nfsExampleDeployment } from './nfs-example-deployment.ts';
export { missingNfsPackages, nfsAptPackages } from './nfs-tools.ts';
export { createLoopbackServingPair, type LoopbackServingPair } from './pki.ts';
export {
  mintServiceAccountKubeconfig,
  type ServiceAccountKubeconfig,
  type ServiceAccountKubeconfigOptions,
} from './service-account-kubeconfig.ts';
