// biome-ignore-all lint/suspicious/noTemplateCurlyInString: pathPattern placeholders are literal text, not JS templates
/**
 * The matrix of StorageClasses and claims on which upstream nfs-subdir-external-provisioner was
 * observed (`record-upstream.ts`) and this provisioner is replayed (`test/upstream-replay.test.ts`),
 * and the shape of what is observed. Each case uses its own namespace and claim name, so cases never
 * see each other's directories on a shared export.
 */

import type { V1PersistentVolume } from '@kubernetes/client-node';

/** One class and one claim. */
export interface UpstreamCase {
  /** Also the claim's name. */
  readonly name: string;
  readonly namespace: string;
  readonly parameters: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
  readonly labels?: Readonly<Record<string, string>>;
  /** The StorageClass's `mountOptions`. */
  readonly mountOptions?: readonly string[];
}

/** A directory or file below the export, relative, with the PV name replaced by `${pv}`. */
export interface ObservedEntry {
  readonly path: string;
  readonly type: 'directory' | 'file';
  /** Permission bits in octal, e.g. `0777`. */
  readonly mode: string;
}

/**
 * The part of a provisioned PV that the provisioner decides, with the PV name replaced by `${pv}` and
 * the NFS server by `${server}`. Left out: what the controller library adds (`claimRef`,
 * `storageClassName`, finalizers, the `pv.kubernetes.io/provisioned-by` annotation), compared by the
 * controller's own tests, and this project's `nfs.kube-provisioner.io/` annotations, which upstream
 * has no counterpart for, like the ownership record files.
 */
export interface ObservedVolume {
  readonly annotations: Readonly<Record<string, string>>;
  readonly labels: Readonly<Record<string, string>>;
  readonly accessModes: readonly string[];
  readonly capacity: Readonly<Record<string, string>>;
  readonly reclaimPolicy: string;
  /** `Filesystem` when unset: the API server's default, applied to upstream's PV on create. */
  readonly volumeMode: string;
  readonly mountOptions: readonly string[];
  readonly nfs: { readonly server: string; readonly path: string; readonly readOnly: boolean };
}

/** Stands for the NFS server in observed volumes; the recording and the replay use different ones. */
export const serverPlaceholder = '${server}';

const libraryAnnotations = new Set(['pv.kubernetes.io/provisioned-by']);
const isOurs = (key: string): boolean => key.startsWith('nfs.kube-provisioner.io/');

/** Projects `pv` onto {@link ObservedVolume}. */
export function observeVolume(pv: V1PersistentVolume): ObservedVolume {
  const name = pv.metadata?.name ?? '';
  const annotations = Object.entries(pv.metadata?.annotations ?? {}).filter(
    ([key]) => !libraryAnnotations.has(key) && !isOurs(key),
  );
  return {
    annotations: Object.fromEntries(annotations.sort(([a], [b]) => a.localeCompare(b))),
    labels: { ...pv.metadata?.labels },
    accessModes: [...(pv.spec?.accessModes ?? [])],
    capacity: Object.fromEntries(Object.entries(pv.spec?.capacity ?? {}).map(([k, v]) => [k, String(v)])),
    reclaimPolicy: pv.spec?.persistentVolumeReclaimPolicy ?? '',
    volumeMode: pv.spec?.volumeMode ?? 'Filesystem',
    mountOptions: [...(pv.spec?.mountOptions ?? [])],
    nfs: {
      server: serverPlaceholder,
      path: (pv.spec?.nfs?.path ?? '').replaceAll(name, pvPlaceholder),
      readOnly: pv.spec?.nfs?.readOnly ?? false,
    },
  };
}

/** What one case did: after provisioning, and after deleting the claim. */
export interface CaseObservation {
  readonly case: string;
  /** The PV's `spec.nfs.path` relative to `NFS_PATH` (`${pv}` for the PV name); `.` for the export. */
  readonly pvPath: string;
  /** The PV as provisioned; absent when the binary could not provision (`provisionFailure`). */
  readonly volume?: ObservedVolume;
  /**
   * The binary's log line when it could not provision the claim (the classic nfs-client on today's
   * API servers). `provisioned` is then the layout its Provision makes, laid out by the recorder as
   * its source says, and only `deleted` is the binary's doing.
   */
  readonly provisionFailure?: string;
  /** Entries that appeared below the export, the claim's probe file included. */
  readonly provisioned: readonly ObservedEntry[];
  /** The case's entries once the PV is gone (`onDelete: retain` keeps them, archives rename them). */
  readonly deleted: readonly ObservedEntry[];
}

/** A committed fixture file: one upstream version over the whole matrix. */
export interface UpstreamFixture {
  /** `v4.0.2`, `master` or `nfs-client-v3.1.0`. */
  readonly upstream: string;
  /** Which of our dialects replaces it, and so which matrix it was recorded over ({@link matrixOf}). */
  readonly dialect: UpstreamDialect;
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

/** `nfs-subdir`: nfs-subdir-external-provisioner; `nfs-client`: the classic nfs-client-provisioner. */
export type UpstreamDialect = 'nfs-subdir' | 'nfs-client';

/** The cases a dialect's upstream understands: the classic knows only `archiveOnDelete`. */
export function matrixOf(dialect: UpstreamDialect): readonly UpstreamCase[] {
  if (dialect === 'nfs-subdir') return upstreamMatrix;
  return upstreamMatrix.filter(
    (c) =>
      c.mountOptions === undefined && Object.keys(c.parameters).every((key) => key === 'archiveOnDelete'),
  );
}

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
    name: 'mount-options',
    namespace: 'm-mount-options',
    parameters: { onDelete: 'delete' },
    mountOptions: ['nfsvers=4.1', 'hard'],
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
