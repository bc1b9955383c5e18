export {
  annAlphaSelectedNode,
  annBetaStorageClass,
  annBetaStorageProvisioner,
  annDynamicallyProvisioned,
  annMigratedTo,
  annSelectedNode,
  annStorageProvisioner,
  finalizerPV,
} from './wire-names.ts';
