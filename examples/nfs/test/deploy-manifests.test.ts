import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { clusterRules, defaultMountRoot, namespaceRules } from '@kube-provisioner/nfs-subdir';
import { loadAllYaml } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';

interface Manifest {
  kind: string;
  metadata: { name: string; namespace?: string };
  [field: string]: unknown;
}

const deployDir = join(import.meta.dirname, '..', 'deploy');
const manifests: Manifest[] = readdirSync(deployDir)
  .filter((file) => file.endsWith('.yaml') && file !== 'kustomization.yaml')
  .flatMap((file) => loadAllYaml(readFileSync(join(deployDir, file), 'utf8')) as Manifest[]);
const only = (kind: string): Manifest => {
  const found = manifests.filter((manifest) => manifest.kind === kind);
  expect(found).toHaveLength(1);
  return found[0] as Manifest;
};

interface PodSpec {
  securityContext: Record<string, unknown>;
  containers: {
    env: { name: string; value?: string }[];
    livenessProbe: { httpGet: { path: string } };
    readinessProbe: { httpGet: { path: string } };
    resources: { requests: Record<string, string> };
    securityContext: Record<string, unknown>;
    volumeMounts: { name: string; mountPath: string }[];
  }[];
  volumes: { name: string; nfs: { server: string; path: string } }[];
}
const podSpec = (only('Deployment') as unknown as { spec: { template: { spec: PodSpec } } }).spec.template
  .spec;
const [container] = podSpec.containers;
const envValue = (name: string): string | undefined =>
  container?.env.find((entry) => entry.name === name)?.value;

describe('example manifests', () => {
  it('grant exactly the cluster-wide rules the provisioner uses', () => {
    expect(only('ClusterRole').rules).toEqual(clusterRules);
  });

  it('grant the Lease verbs, and nothing else, in the provisioner namespace', () => {
    expect(only('Role').rules).toEqual(namespaceRules);
    expect(only('Role').rules).toEqual([
      {
        apiGroups: ['coordination.k8s.io'],
        resources: ['leases'],
        verbs: ['get', 'watch', 'create', 'update'],
      },
    ]);
  });

  it('bind both roles to the ServiceAccount the Deployment runs as', () => {
    const account = only('ServiceAccount').metadata;
    expect(
      (only('Deployment') as unknown as { spec: { template: { spec: { serviceAccountName: string } } } }).spec
        .template.spec.serviceAccountName,
    ).toBe(account.name);
    for (const binding of [only('ClusterRoleBinding'), only('RoleBinding')]) {
      expect(binding.subjects).toEqual([
        { kind: 'ServiceAccount', name: account.name, namespace: account.namespace },
      ]);
    }
  });

  it('serve the class the Deployment is named for, allowing expansion as upstream does', () => {
    const storageClass = only('StorageClass');
    expect(storageClass.provisioner).toBe(envValue('PROVISIONER_NAME'));
    expect(storageClass.allowVolumeExpansion).toBe(true);
  });

  it('mount the export the environment names at the mount root', () => {
    const [volume] = podSpec.volumes;
    expect(volume?.nfs).toEqual({ server: envValue('NFS_SERVER'), path: envValue('NFS_PATH') });
    expect(container?.volumeMounts).toEqual([{ name: volume?.name, mountPath: defaultMountRoot }]);
  });

  it('run as root like upstream, with probes, requests and only the capabilities it needs', () => {
    expect(podSpec.securityContext).not.toHaveProperty('runAsNonRoot');
    expect(container?.livenessProbe.httpGet.path).toBe('/healthz');
    expect(container?.readinessProbe.httpGet.path).toBe('/readyz');
    expect(Object.keys(container?.resources.requests ?? {})).toEqual(['cpu', 'memory']);
    expect(container?.securityContext).toMatchObject({
      runAsUser: 0,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'], add: ['CHOWN', 'DAC_OVERRIDE', 'FOWNER'] },
    });
  });
});
