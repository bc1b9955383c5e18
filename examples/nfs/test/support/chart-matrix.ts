/**
 * The (release name, values) pairs for which our chart must render the same object names, labels,
 * selectors and provisioner name as the upstream nfs-subdir-external-provisioner chart. The recorder
 * (scripts/record-upstream-chart.ts) renders upstream's chart for each case, the golden test ours.
 */

/** One `helm template` invocation. */
export interface ChartCase {
  /** Stable key in the fixture. */
  readonly id: string;
  readonly release: string;
  /** Values as given with `-f`; `nfs.server`/`nfs.path` are part of every case but build mode. */
  readonly values: Readonly<Record<string, unknown>>;
  /** Extra `--api-versions`, to render as for a cluster that serves them (e.g. PodSecurityPolicy). */
  readonly apiVersions?: readonly string[];
}

/** The namespace every case is rendered into. */
export const chartNamespace = 'nfs-provisioner';

const nfs = { server: '10.0.0.5', path: '/export/k8s' };

/** `--api-versions` entry of a cluster older than 1.25, which still serves PodSecurityPolicy. */
export const pspApiVersion = 'policy/v1beta1/PodSecurityPolicy';

export const chartCases: readonly ChartCase[] = [
  // Upstream's README install command.
  { id: 'default', release: 'nfs-subdir-external-provisioner', values: { nfs } },
  { id: 'short-release', release: 'nfs', values: { nfs } },
  { id: 'release-contains-chart-name', release: 'team-a-nfs-subdir-external-provisioner', values: { nfs } },
  // 51 characters (Helm allows 53): `<release>-nfs-subdir-` is cut at 63 characters and loses its `-`.
  { id: 'long-release', release: 'release-name-long-enough-that-names-get-truncated-x', values: { nfs } },
  { id: 'name-override', release: 'nfs', values: { nfs, nameOverride: 'files' } },
  { id: 'fullname-override', release: 'nfs', values: { nfs, fullnameOverride: 'shared-nfs' } },
  {
    id: 'provisioner-name',
    release: 'nfs',
    values: { nfs, storageClass: { provisionerName: 'example.com/nfs' } },
  },
  {
    id: 'storage-class',
    release: 'nfs',
    values: {
      nfs,
      storageClass: {
        name: 'fast-nfs',
        defaultClass: true,
        reclaimPolicy: 'Retain',
        volumeBindingMode: 'WaitForFirstConsumer',
        archiveOnDelete: false,
        onDelete: 'retain',
        // biome-ignore lint/suspicious/noTemplateCurlyInString: a pathPattern placeholder, not a JS template
        pathPattern: '${.PVC.namespace}/${.PVC.name}',
        annotations: { team: 'storage' },
      },
    },
  },
  { id: 'no-storage-class', release: 'nfs', values: { nfs, storageClass: { create: false } } },
  { id: 'psp', release: 'nfs', values: { nfs, podSecurityPolicy: { enabled: true } } },
  {
    id: 'psp-served',
    release: 'nfs',
    values: { nfs, podSecurityPolicy: { enabled: true } },
    apiVersions: [pspApiVersion],
  },
  { id: 'build-mode', release: 'nfs', values: { nfs: { server: '127.0.0.1' }, buildMode: true } },
  { id: 'no-rbac', release: 'nfs', values: { nfs, rbac: { create: false } } },
  {
    id: 'service-account-name',
    release: 'nfs',
    values: { nfs, serviceAccount: { name: 'nfs-sa', annotations: { owner: 'storage' } } },
  },
  {
    id: 'existing-service-account',
    release: 'nfs',
    values: { nfs, serviceAccount: { create: false, name: 'preexisting' } },
  },
  { id: 'default-service-account', release: 'nfs', values: { nfs, serviceAccount: { create: false } } },
  { id: 'no-leader-election', release: 'nfs', values: { nfs, leaderElection: { enabled: false } } },
  {
    id: 'mount-options-pdb-labels',
    release: 'nfs',
    values: {
      nfs: { ...nfs, mountOptions: ['nfsvers=4.1', 'hard'] },
      podDisruptionBudget: { enabled: true },
      labels: { team: 'storage', tier: 'infra' },
    },
  },
];
