/**
 * RBAC as data: the rules a ProvisionController needs, for a provisioner to
 * extend into its own table, and a renderer that turns a table into the Role YAML shipped beside it.
 * Manifests are tested against (or generated from) the table, so RBAC cannot drift from the code.
 */

/** One RBAC policy rule. */
export interface PolicyRule {
  readonly apiGroups: readonly string[];
  readonly resources: readonly string[];
  readonly verbs: readonly string[];
}

/**
 * Cluster-wide rules of the controller itself: cache PVs, claims and classes; save, delete and patch
 * PVs (patch for the finalizer); record and aggregate events. Claims are only read: add `patch` on
 * `persistentvolumeclaims` if the provisioner can ask for a reschedule.
 */
export const controllerClusterRules: readonly PolicyRule[] = [
  {
    apiGroups: [''],
    resources: ['persistentvolumes'],
    verbs: ['get', 'list', 'watch', 'create', 'delete', 'patch'],
  },
  { apiGroups: [''], resources: ['persistentvolumeclaims'], verbs: ['get', 'list', 'watch'] },
  { apiGroups: ['storage.k8s.io'], resources: ['storageclasses'], verbs: ['get', 'list', 'watch'] },
  { apiGroups: [''], resources: ['events'], verbs: ['create', 'update', 'patch'] },
];

/**
 * Cluster-wide rule for claims that name a VolumeAttributesClass: the controller caches the classes
 * (its informer starts with the first such claim). Kept apart from {@link controllerClusterRules} so
 * that a drop-in deployment under an older role keeps working for every other claim; without it, such
 * a claim gets a `ProvisioningFailed` event quoting the 403.
 */
export const volumeAttributesClassRules: readonly PolicyRule[] = [
  { apiGroups: ['storage.k8s.io'], resources: ['volumeattributesclasses'], verbs: ['get', 'list', 'watch'] },
];

/**
 * Cluster-wide rule for a provisioner that implements `expand`: the controller records a resize in
 * the claim's status (`allocatedResources`, `allocatedResourceStatuses`, `capacity`, conditions). The
 * PV's capacity is written with the `patch` on `persistentvolumes` that {@link controllerClusterRules}
 * grants already.
 */
export const volumeExpansionRules: readonly PolicyRule[] = [
  { apiGroups: [''], resources: ['persistentvolumeclaims/status'], verbs: ['patch'] },
];

/**
 * Cluster-wide rules of a provisioner that clones through `/clone` and implements `expand`:
 * {@link controllerClusterRules} with `patch` on claims (the cloning-protection finalizer on a clone's
 * source claim), then {@link volumeExpansionRules}. The bundled hostPath and NFS provisioners start
 * from it.
 */
export const cloneAndExpandClusterRules: readonly PolicyRule[] = [
  ...controllerClusterRules.map((rule) =>
    rule.resources.includes('persistentvolumeclaims') ? { ...rule, verbs: [...rule.verbs, 'patch'] } : rule,
  ),
  ...volumeExpansionRules,
];

/**
 * Rules in the election namespace. `watch` lets a standby replica see a released or expired Lease at
 * once; without it the elector logs a 403 and falls back to polling every retry period.
 */
export const leaderElectionRules: readonly PolicyRule[] = [
  { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'watch', 'create', 'update'] },
];

/** A ClusterRole, or a Role in `namespace`. */
export interface RoleManifest {
  readonly kind: 'ClusterRole' | 'Role';
  readonly name: string;
  /** Required for a Role. */
  readonly namespace?: string;
  readonly rules: readonly PolicyRule[];
}

/** The `rules:` block of a role, in the flow style of hand-written manifests (`verbs: ["get"]`). */
export function renderRules(rules: readonly PolicyRule[]): string {
  const list = (items: readonly string[]): string =>
    `[${items.map((item) => JSON.stringify(item)).join(', ')}]`;
  const entries = rules.map(
    (rule) =>
      `  - apiGroups: ${list(rule.apiGroups)}\n    resources: ${list(rule.resources)}\n    verbs: ${list(rule.verbs)}\n`,
  );
  return `rules:\n${entries.join('')}`;
}

/** One YAML document for `role`, without the leading `---`. */
export function renderRole(role: RoleManifest): string {
  if (role.kind === 'Role' && role.namespace === undefined)
    throw new Error(`Role ${role.name} needs a namespace`);
  const namespace = role.namespace === undefined ? '' : `  namespace: ${role.namespace}\n`;
  return [
    'apiVersion: rbac.authorization.k8s.io/v1\n',
    `kind: ${role.kind}\n`,
    `metadata:\n  name: ${role.name}\n${namespace}`,
    renderRules(role.rules),
  ].join('');
}
