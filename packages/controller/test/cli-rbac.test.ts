import { loadAllYaml } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import {
  cloneAndExpandClusterRules,
  controllerClusterRules,
  leaderElectionRules,
  renderRole,
  renderRules,
  volumeAttributesClassRules,
} from '../src/cli/rbac.ts';

describe('RBAC tables', () => {
  it('grant the controller what it uses, claims read-only', () => {
    expect(controllerClusterRules.map((rule) => [rule.resources.join(), rule.verbs.join(' ')])).toEqual([
      ['persistentvolumes', 'get list watch create delete patch'],
      ['persistentvolumeclaims', 'get list watch'],
      ['storageclasses', 'get list watch'],
      ['events', 'create update patch'],
    ]);
  });

  it('grant a cloning, expanding provisioner claim patches and resize status on top', () => {
    expect(cloneAndExpandClusterRules.map((rule) => [rule.resources.join(), rule.verbs.join(' ')])).toEqual([
      ['persistentvolumes', 'get list watch create delete patch'],
      ['persistentvolumeclaims', 'get list watch patch'],
      ['storageclasses', 'get list watch'],
      ['events', 'create update patch'],
      ['persistentvolumeclaims/status', 'patch'],
    ]);
  });

  it('let the controller cache VolumeAttributesClasses, in a rule of their own', () => {
    expect(volumeAttributesClassRules).toEqual([
      {
        apiGroups: ['storage.k8s.io'],
        resources: ['volumeattributesclasses'],
        verbs: ['get', 'list', 'watch'],
      },
    ]);
    expect(controllerClusterRules.flatMap((rule) => rule.resources)).not.toContain('volumeattributesclasses');
  });

  it('let the elector watch its Lease', () => {
    expect(leaderElectionRules).toEqual([
      {
        apiGroups: ['coordination.k8s.io'],
        resources: ['leases'],
        verbs: ['get', 'watch', 'create', 'update'],
      },
    ]);
  });
});

describe('renderRole', () => {
  it('renders a Role whose YAML parses back to the table', () => {
    const text = renderRole({
      kind: 'Role',
      name: 'election',
      namespace: 'storage',
      rules: leaderElectionRules,
    });
    expect(text).toBe(
      [
        'apiVersion: rbac.authorization.k8s.io/v1',
        'kind: Role',
        'metadata:',
        '  name: election',
        '  namespace: storage',
        'rules:',
        '  - apiGroups: ["coordination.k8s.io"]',
        '    resources: ["leases"]',
        '    verbs: ["get", "watch", "create", "update"]',
        '',
      ].join('\n'),
    );
    expect(loadAllYaml(text)).toEqual([
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: { name: 'election', namespace: 'storage' },
        rules: leaderElectionRules,
      },
    ]);
  });

  it('renders a ClusterRole without a namespace, with the core group as ""', () => {
    const text = renderRole({ kind: 'ClusterRole', name: 'runner', rules: controllerClusterRules });
    expect(text).not.toContain('namespace:');
    expect(text).toContain(renderRules(controllerClusterRules));
    expect(text).toContain('  - apiGroups: [""]\n    resources: ["persistentvolumes"]\n');
    expect((loadAllYaml(text)[0] as { rules: unknown }).rules).toEqual(controllerClusterRules);
  });

  it('refuses a Role without a namespace', () => {
    expect(() => renderRole({ kind: 'Role', name: 'election', rules: leaderElectionRules })).toThrow(
      'Role election needs a namespace',
    );
  });
});
