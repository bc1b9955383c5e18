export { type Binaries, defaultCacheRoot, type EnsureBinariesOptions, ensureBinaries } from './binaries.ts';
export { MissingToolError } from './command.ts';
export {
  attachControlPlane,
  type ControlPlane,
  ControlPlaneStartError,
  type StartControlPlaneOptions,
  startControlPlane,
} from './control-plane.ts';
export { createFakeNode, type FakeNodeOptions } from './fake-node.ts';
export {
  mintServiceAccountKubeconfig,
  type ServiceAccountKubeconfig,
  type ServiceAccountKubeconfigOptions,
} from './service-account-kubeconfig.ts';
export type { ComponentName } from './state-dir.ts';
/** Version of this package, read from its manifest. */
export { version } from './version.ts';
export { pinnedVersions } from './versions.ts';
