/**
 * The kustomize manifests against the real control plane: every object passes a server-side dry
 * run (validation and admission), and the RBAC, applied for real, lets the ServiceAccount do exactly
 * what the provisioner needs and nothing it must not.
 */
import { join } from 'node:path';
import { applyManifests } from '@kube-provisioner/testenv';
import { isAllowed, renderKustomization } from '@kube-provisioner/testenv/internal';
import { useTestEnv } from '@kube-provisioner/testenv/testing';
import type { KubernetesObject } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';

const env = useTestEnv();
const deployDir = join(import.meta.dirname, '..', 'deploy');
const user = 'system:serviceaccount:nfs-provisioner:nfs-subdir-provisioner';

function allowed(namespace: string, group: string, resource: string, verb: string): Promise<boolean> {
  return isAllowed(env.kubeConfig, { user, namespace, group, resource, verb });
}

describe('example kustomize manifests', () => {
  it('are accepted by the API server (server-side dry run)', async () => {
    const objects: KubernetesObject[] = await renderKustomization(deployDir);
    expect(objects.map((object) => object.kind).sort()).toEqual([
      'ClusterRole',
      'ClusterRoleBinding',
      'CustomResourceDefinition',
      'Deployment',
      'Namespace',
      'Role',
      'RoleBinding',
      'ServiceAccount',
      'StorageClass',
    ]);
    await applyManifests(env.kubeConfig, objects, { dryRun: true });
  });

  it('give the ServiceAccount its verbs, Leases only in its namespace, and no pods or secrets', async () => {
    const objects = await renderKustomization(deployDir);
    await applyManifests(
      env.kubeConfig,
      objects.filter((object) => object.kind !== 'Deployment' && object.kind !== 'StorageClass'),
    );
    for (const verb of ['get', 'list', 'watch', 'create', 'delete', 'patch']) {
      expect(await allowed('', '', 'persistentvolumes', verb), `persistentvolumes ${verb}`).toBe(true);
    }
    expect(await allowed('any', '', 'persistentvolumeclaims', 'watch')).toBe(true);
    expect(await allowed('any', '', 'persistentvolumeclaims', 'update')).toBe(false);
    expect(await allowed('', 'storage.k8s.io', 'storageclasses', 'list')).toBe(true);
    expect(await allowed('any', '', 'events', 'create')).toBe(true);
    for (const verb of ['get', 'create', 'update']) {
      expect(await allowed('nfs-provisioner', 'coordination.k8s.io', 'leases', verb)).toBe(true);
    }
    expect(await allowed('kube-system', 'coordination.k8s.io', 'leases', 'update')).toBe(false);
    expect(await allowed('nfs-provisioner', '', 'endpoints', 'update')).toBe(false);
    expect(await allowed('any', '', 'pods', 'create')).toBe(false);
    expect(await allowed('nfs-provisioner', '', 'secrets', 'get')).toBe(false);
    expect(await allowed('', '', 'nodes', 'get')).toBe(false);
    const snapshots = 'snapshot.kube-provisioner.io';
    // `delete`: the leader deletes the snapshots a class's bounds expire.
    for (const verb of ['get', 'list', 'watch', 'patch', 'delete']) {
      expect(await allowed('any', snapshots, 'directorysnapshots', verb), `directorysnapshots ${verb}`).toBe(
        true,
      );
    }
    expect(await allowed('any', snapshots, 'directorysnapshots', 'create')).toBe(false);
    expect(await allowed('any', snapshots, 'directorysnapshots/status', 'patch')).toBe(true);
  });
});
