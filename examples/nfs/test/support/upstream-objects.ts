/**
 * Objects as an upstream release of one recorded case left them in a cluster, rebuilt from the
 * recorded facts (names, labels, selectors, bindings, StorageClass fields) for the upgrade tests. Only
 * what the facts say is set; everything else is the minimum the API server requires.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import type { ObjectFacts } from './chart-facts.ts';
import { chartNamespace } from './chart-matrix.ts';

/** Where and as what the rebuilt objects are created. */
export interface UpstreamObjectsOptions {
  readonly namespace: string;
  /** Image of the Deployment, e.g. upstream's default `repository:tag`. */
  readonly image: string;
  readonly nfs: { readonly server: string; readonly path: string };
  /** Replaces the recorded StorageClass name (cluster-scoped, so unique per test). */
  readonly storageClassName?: string;
}

const namespaced = new Set(['ServiceAccount', 'Role', 'RoleBinding', 'Deployment', 'PersistentVolumeClaim']);
const apiVersions: Record<string, string> = {
  ServiceAccount: 'v1',
  PersistentVolume: 'v1',
  PersistentVolumeClaim: 'v1',
  ClusterRole: 'rbac.authorization.k8s.io/v1',
  ClusterRoleBinding: 'rbac.authorization.k8s.io/v1',
  Role: 'rbac.authorization.k8s.io/v1',
  RoleBinding: 'rbac.authorization.k8s.io/v1',
  Deployment: 'apps/v1',
  StorageClass: 'storage.k8s.io/v1',
  PodDisruptionBudget: 'policy/v1',
};

function subject(text: string, namespace: string): Record<string, string> {
  const [kind = '', ref = ''] = text.split(' ');
  const [ns = '', name = ''] = ref.split('/');
  return { kind, name, namespace: ns === chartNamespace ? namespace : ns };
}

function spec(facts: ObjectFacts, options: UpstreamObjectsOptions): Record<string, unknown> {
  const ref = (facts.roleRef ?? '').split('/');
  const [volumeName = 'root', source = ''] = (facts.rootVolume ?? '').replace(/[()]/g, '').split(' ');
  const claim = source.startsWith('persistentVolumeClaim:')
    ? source.slice('persistentVolumeClaim:'.length)
    : '';
  switch (facts.kind) {
    case 'Deployment':
      return {
        spec: {
          replicas: 1,
          strategy: { type: 'Recreate' },
          selector: { matchLabels: facts.selector },
          template: {
            metadata: { labels: facts.podLabels },
            spec: {
              serviceAccountName: facts.serviceAccountName,
              containers: [
                {
                  name: facts.containerName,
                  image: options.image,
                  env: [{ name: 'PROVISIONER_NAME', value: facts.provisioner }],
                  volumeMounts: [{ name: volumeName, mountPath: '/persistentvolumes' }],
                },
              ],
              volumes: [
                claim
                  ? { name: volumeName, persistentVolumeClaim: { claimName: claim } }
                  : source === 'emptyDir'
                    ? { name: volumeName, emptyDir: {} }
                    : { name: volumeName, nfs: options.nfs },
              ],
            },
          },
        },
      };
    case 'StorageClass':
      return {
        provisioner: facts.provisioner,
        parameters: facts.parameters,
        reclaimPolicy: facts.reclaimPolicy,
        volumeBindingMode: facts.volumeBindingMode,
        allowVolumeExpansion: facts.allowVolumeExpansion,
        mountOptions: facts.mountOptions,
      };
    case 'ClusterRole':
    case 'Role':
      return { rules: facts.rules };
    case 'ClusterRoleBinding':
    case 'RoleBinding':
      return {
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: ref[0], name: ref[1] },
        subjects: (facts.subjects ?? []).map((s) => subject(s, options.namespace)),
      };
    case 'PodDisruptionBudget':
      return { spec: { maxUnavailable: 1, selector: { matchLabels: facts.selector } } };
    case 'PersistentVolumeClaim':
      return {
        spec: {
          accessModes: ['ReadWriteOnce'],
          volumeMode: 'Filesystem',
          storageClassName: '',
          selector: { matchLabels: facts.selector },
          resources: { requests: { storage: '10Mi' } },
        },
      };
    case 'PersistentVolume':
      return {
        spec: {
          capacity: { storage: '10Mi' },
          volumeMode: 'Filesystem',
          accessModes: ['ReadWriteOnce'],
          persistentVolumeReclaimPolicy: 'Retain',
          storageClassName: '',
          nfs: options.nfs,
        },
      };
    default:
      return {};
  }
}

/** The objects of one recorded case, ready to apply; kinds the cluster no longer serves are left out. */
export function upstreamObjects(
  facts: readonly ObjectFacts[],
  options: UpstreamObjectsOptions,
): KubernetesObject[] {
  return facts
    .filter((f) => apiVersions[f.kind])
    .map((f) => {
      const name = f.kind === 'StorageClass' ? (options.storageClassName ?? f.name) : f.name;
      const metadata = {
        name,
        labels: f.labels,
        ...(namespaced.has(f.kind) ? { namespace: options.namespace } : {}),
        ...(f.annotations ? { annotations: f.annotations } : {}),
      };
      const object = { apiVersion: apiVersions[f.kind], kind: f.kind, metadata, ...spec(f, options) };
      return JSON.parse(JSON.stringify(object)) as KubernetesObject;
    });
}
