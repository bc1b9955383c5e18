/** Deployment mode: one instance per node (DaemonSet), or one leader-elected instance for a shared root. */
export type ProvisionerMode = 'per-node' | 'shared';
