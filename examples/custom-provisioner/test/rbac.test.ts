import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  controllerClusterRules,
  leaderElectionRules,
  type PolicyRule,
  volumeAttributesClassRules,
} from '@kube-provisioner/controller/cli';
import { loadAllYaml } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';

const manifests = loadAllYaml(readFileSync(join(import.meta.dirname, '..', 'rbac.yaml'), 'utf8')) as {
  kind: string;
  rules?: PolicyRule[];
}[];
const rulesOf = (kind: string): PolicyRule[] =>
  manifests.find((manifest) => manifest.kind === kind)?.rules ?? [];

describe('rbac.yaml', () => {
  it('grants every verb the controller uses cluster-wide, VolumeAttributesClasses included, plus claim patch for rescheduling', () => {
    const granted = rulesOf('ClusterRole');
    for (const rule of [...controllerClusterRules, ...volumeAttributesClassRules]) {
      const match = granted.find((candidate) => candidate.resources.join() === rule.resources.join());
      expect(match?.apiGroups).toEqual(rule.apiGroups);
      expect(match?.verbs).toEqual(expect.arrayContaining([...rule.verbs]));
    }
    expect(granted.find((rule) => rule.resources.includes('persistentvolumeclaims'))?.verbs).toContain(
      'patch',
    );
  });

  it('grants exactly the leader-election rules, Lease watch included, in the election namespace', () => {
    expect(rulesOf('Role')).toEqual(leaderElectionRules);
  });
});
