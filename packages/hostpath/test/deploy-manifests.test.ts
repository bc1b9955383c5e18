import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderRole } from '@kube-provisioner/controller/cli';
import { loadAllYaml } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { parseClassParameters } from '../src/class-parameters.ts';
import { capacityRules, clusterRules, namespaceRules } from '../src/rbac-rules.ts';

interface Manifest {
  kind: string;
  metadata: { name: string; namespace?: string };
  [field: string]: unknown;
}

const deployDir = join(import.meta.dirname, '..', 'deploy');
const rbacText = readFileSync(join(deployDir, 'rbac.yaml'), 'utf8');
const manifests: Manifest[] = readdirSync(deployDir)
  .filter((file) => file.endsWith('.yaml'))
  .flatMap((file) => loadAllYaml(readFileSync(join(deployDir, file), 'utf8')) as Manifest[]);

function byKind(kind: string): Manifest[] {
  return manifests.filter((manifest) => manifest.kind === kind);
}

interface Container {
  livenessProbe: { httpGet: { path: string } };
  readinessProbe: { httpGet: { path: string } };
  securityContext: Record<string, unknown>;
}

function podSpec(workload: Manifest): { containers: Container[]; volumes: { hostPath?: unknown }[] } {
  return (workload as unknown as { spec: { template: { spec: ReturnType<typeof podSpec> } } }).spec.template
    .spec;
}

describe('deploy manifests', () => {
  it('grant exactly the cluster-wide verbs the code uses', () => {
    const [role] = byKind('ClusterRole');
    expect(byKind('ClusterRole')).toHaveLength(1);
    expect(role?.rules).toEqual(clusterRules);
  });

  it('grant the Lease verbs and the capacity verbs only in the provisioner namespace', () => {
    expect(byKind('Role')).toMatchObject([
      {
        metadata: {
          name: 'kube-provisioner-hostpath-leader-election',
          namespace: 'kube-provisioner-hostpath',
        },
        rules: namespaceRules,
      },
      {
        metadata: { name: 'kube-provisioner-hostpath-capacity', namespace: 'kube-provisioner-hostpath' },
        rules: capacityRules,
      },
    ]);
  });

  it('ship an opt-in CSIDriver for capacity-aware scheduling, named as its StorageClass provisioner', () => {
    const [driver] = byKind('CSIDriver');
    expect(byKind('CSIDriver')).toHaveLength(1);
    expect(driver).toMatchObject({
      metadata: { name: 'hostpath.kube-provisioner.io' },
      spec: {
        attachRequired: false,
        podInfoOnMount: false,
        storageCapacity: true,
        volumeLifecycleModes: ['Persistent'],
      },
    });
    expect(byKind('StorageClass').filter((sc) => sc.provisioner === driver?.metadata.name)).toHaveLength(1);
  });

  it('let standby replicas watch the Lease, so a released Lease is taken over at once', () => {
    expect(namespaceRules).toContainEqual(
      expect.objectContaining({ resources: ['leases'], verbs: expect.arrayContaining(['watch']) }),
    );
  });

  it('are the tables rendered, text for text', () => {
    const namespace = 'kube-provisioner-hostpath';
    expect(rbacText).toContain(
      renderRole({ kind: 'ClusterRole', name: 'kube-provisioner-hostpath', rules: clusterRules }),
    );
    expect(rbacText).toContain(
      renderRole({ kind: 'Role', name: `${namespace}-leader-election`, namespace, rules: namespaceRules }),
    );
    expect(rbacText).toContain(
      renderRole({ kind: 'Role', name: `${namespace}-capacity`, namespace, rules: capacityRules }),
    );
  });

  it('never allow creating pods or reading secrets', () => {
    const rules = [...clusterRules, ...namespaceRules, ...capacityRules];
    expect(rules.flatMap((rule) => rule.resources)).not.toContain('pods');
    expect(rules.flatMap((rule) => rule.resources)).not.toContain('secrets');
    expect(rules.flatMap((rule) => rule.verbs)).not.toContain('*');
  });

  it('bind both roles to the shipped ServiceAccount', () => {
    const [account] = byKind('ServiceAccount');
    for (const binding of [...byKind('ClusterRoleBinding'), ...byKind('RoleBinding')]) {
      expect(binding.subjects).toEqual([
        { kind: 'ServiceAccount', name: account?.metadata.name, namespace: account?.metadata.namespace },
      ]);
    }
  });

  it.each(['DaemonSet', 'Deployment'])(
    'ship a %s with health probes and a tight security context',
    (kind) => {
      const workloads = byKind(kind);
      // One of each, the shipped ServiceAccount's namespace (an array matches only at its length).
      expect(workloads).toMatchObject([
        { metadata: { name: 'hostpath-provisioner', namespace: 'kube-provisioner-hostpath' } },
      ]);
      const spec = podSpec(workloads[0] as Manifest);
      const [container] = spec.containers;
      expect(container?.livenessProbe.httpGet.path).toBe('/healthz');
      expect(container?.readinessProbe.httpGet.path).toBe('/readyz');
      expect(container?.securityContext).toMatchObject({
        allowPrivilegeEscalation: false,
        privileged: false,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ['ALL'] },
      });
      expect(spec.volumes.filter((volume) => volume.hostPath !== undefined)).toHaveLength(1);
    },
  );

  it('ship StorageClasses whose parameters validate and that do not advertise expansion', () => {
    const classes = byKind('StorageClass');
    expect(classes.length).toBeGreaterThan(0);
    for (const storageClass of classes) {
      expect(storageClass.allowVolumeExpansion).toBe(false);
      expect(() =>
        parseClassParameters(storageClass.parameters as Record<string, string> | undefined),
      ).not.toThrow();
    }
  });
});
