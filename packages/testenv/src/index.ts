/**
 * The front door for an end-to-end test: a real Kubernetes control plane (etcd, kube-apiserver,
 * controller manager, scheduler) built from Go modules, fake and real nodes, claims, waits, an NFS
 * server (and its exports read from userspace) and the programs under test. The UML guest is in
 * `@kube-provisioner/testenv/guest`, the vitest helpers in `/testing` and `/vitest`.
 *
 * Stability: stable (see "Versioning" in the repository README).
 *
 * @packageDocumentation
 */
export type { Binaries } from './binaries.ts';
export { bindClaim, type ClaimSpec, createClaims, deleteClaimAndVolume } from './claims.ts';
export {
  attachControlPlane,
  type ControlPlane,
  type StartControlPlaneOptions,
  startControlPlane,
} from './control-plane.ts';
export { createFakeNode, type FakeNodeOptions } from './fake-node.ts';
export { listNfsDirectory, type NfsLocation, readNfsFile, writeNfsFile } from './libnfs.ts';
export { type ApplyManifestsOptions, applyManifests } from './manifests.ts';
export { type NfsServer, type StartNfsServerOptions, startNfsServer } from './nfs-server.ts';
export type { PodNetwork } from './node/node-config.ts';
export type { NodeProcessName } from './node/node-processes.ts';
export {
  type RealNode,
  RealNodeUnavailableError,
  type StartRealNodeOptions,
  startRealNode,
} from './node/real-node.ts';
export {
  type ProgramCommand,
  type RunningProgram,
  type StartProgramOptions,
  startProgram,
  workspaceBinCommand,
} from './program-process.ts';
export type { ComponentName } from './state-dir.ts';
/** Version of this package, read from its manifest. */
export { version } from './version.ts';
export { stopWaiting, type WaitForOptions, waitFor } from './wait-for.ts';
