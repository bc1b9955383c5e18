// biome-ignore-all lint/suspicious/noTemplateCurlyInString: pathPattern placeholders are literal text, not JS templates
/**
 * The matrix of StorageClasses and claims on which upstream nfs-subdir-external-provisioner was
 * observed (`record-upstream.ts`) and this provisioner is replayed (`test/upstream-replay.test.ts`),
 * and the shape of what is observed. Each case uses its own namespace and claim name, so cases never
 * see each other's directories on a shared export.
 */

/** One class and one claim. */
export interface UpstreamCase {
  /** Also the claim's name. */
  readonly name: string;
  readonly namespace: string;
  readonly parameters: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
  readonly labels?: Readonly<Record<string, string>>;
}

/** A directory or file below the export, relative, with the PV name replaced by `${pv}`. */
export interface ObservedEntry {
  readonly path: string;
  readonly type: 'directory' | 'file';
  /** Permission bits in octal, e.g. `0777`. */
  readonly mode: string;
}

/** What one case did: after provisioning, and after deleting the claim. */
export interface CaseObservation {
  readonly case: string;
  /** The PV's `spec.nfs.path` relative to `NFS_PATH` (`${pv}` for the PV name); `.` for the export. */
  readonly pvPath: string;
  /** Entries that appeared below the export, the claim's probe file included. */
  readonly provisioned: readonly ObservedEntry[];
  /** The case's entries once the PV is gone (`onDelete: retain` keeps them, archives rename them). */
  readonly deleted: readonly ObservedEntry[];
}

/** A committed fixture file: one upstream version over the whole matrix. */
export interface UpstreamFixture {
  /** `v4.0.2` or `master`. */
  readonly upstream: string;
  /** `recorded` by `record-upstream.ts`, or `derived` from upstream's source where it could not be run. */
  readonly source: 'recorded' | 'derived';
  /** Commit, how it was obtained, when. */
  readonly provenance: string;
  readonly observations: readonly CaseObservation[];
}

/** Stands for the PV name in observed paths, which differs on every run. */
export const pvPlaceholder = '${pv}';

/** The file a claim's workload writes, so archives and retains can be seen to keep data. */
export const probeFile = 'probe.txt';

const nested = '${.PVC.namespace}/${.PVC.name}';
const flat = '${.PVC.namespace}-${.PVC.name}';

/** Every case, in recording order. */
export const upstreamMatrix: readonly UpstreamCase[] = [
  { name: 'default', namespace: 'm-default', parameters: {} },
  { name: 'archive-true', namespace: 'm-archive-true', parameters: { archiveOnDelete: 'true' } },
  { name: 'archive-false', namespace: 'm-archive-false', parameters: { archiveOnDelete: 'false' } },
  { name: 'delete', namespace: 'm-delete', parameters: { onDelete: 'delete' } },
  { name: 'retain', namespace: 'm-retain', parameters: { onDelete: 'retain' } },
  { name: 'flat', namespace: 'm-flat', parameters: { pathPattern: flat } },
  { name: 'flat-delete', namespace: 'm-flat-delete', parameters: { pathPattern: flat, onDelete: 'delete' } },
  { name: 'flat-retain', namespace: 'm-flat-retain', parameters: { pathPattern: flat, onDelete: 'retain' } },
  { name: 'nested', namespace: 'm-nested', parameters: { pathPattern: nested } },
  {
    name: 'nested-delete',
    namespace: 'm-nested-delete',
    parameters: { pathPattern: nested, onDelete: 'delete' },
  },
  {
    name: 'nested-archive-false',
    namespace: 'm-nested-archive-false',
    parameters: { pathPattern: nested, archiveOnDelete: 'false' },
  },
  {
    name: 'labels',
    namespace: 'm-labels',
    parameters: { pathPattern: '${.PVC.namespace}/${.PVC.labels.app}/${.PVC.name}', onDelete: 'delete' },
    labels: { app: 'web' },
  },
  {
    name: 'annotation',
    namespace: 'm-annotation',
    parameters: { pathPattern: '${.PVC.namespace}/${.PVC.annotations.nfs.io/storage-path}' },
    annotations: { 'nfs.io/storage-path': 'annotation-data' },
  },
  {
    name: 'annotation-missing',
    namespace: 'm-annotation-missing',
    parameters: {
      pathPattern: '${.PVC.namespace}/${.PVC.annotations.nfs.io/storage-path}',
      onDelete: 'retain',
    },
  },
  {
    name: 'trailing-slash',
    namespace: 'm-trailing-slash',
    parameters: { pathPattern: '${.PVC.namespace}-${.PVC.annotations.dir}', onDelete: 'delete' },
    annotations: { dir: 'trailing/' },
  },
  {
    name: 'dot-segment',
    namespace: 'm-dot-segment',
    parameters: { pathPattern: '${.PVC.namespace}/${.PVC.annotations.dir}', onDelete: 'retain' },
    annotations: { dir: './dot' },
  },
  {
    name: 'double-slash',
    namespace: 'm-double-slash',
    parameters: { pathPattern: '${.PVC.namespace}/${.PVC.annotations.dir}', onDelete: 'retain' },
    annotations: { dir: 'a//b' },
  },
];
