// biome-ignore-all lint/suspicious/noTemplateCurlyInString: pathPattern placeholders are literal text, not JS templates
import { describe, expect, it } from 'vitest';
import {
  claim,
  context,
  nfsProvisioner,
  provisioned,
  provisionOptions,
  storageClass,
  temporaryRoot,
  tree,
} from './fixtures.ts';

describe('two replicas provisioning the same claim at once', () => {
  it.each([undefined, '${.PVC.namespace}/${.PVC.name}', '${.PVC.namespace}/apps/${.PVC.name}'])(
    'both return the same PV, with no failure, one directory and one record (pattern %s)',
    async (pathPattern) => {
      for (let round = 0; round < 10; round++) {
        await using root = await temporaryRoot();
        const options = provisionOptions(
          claim({ namespace: 'team-a', name: 'db' }),
          storageClass(pathPattern === undefined ? {} : { pathPattern }),
        );
        const replicas = [nfsProvisioner('nfs-subdir', root.path), nfsProvisioner('nfs-subdir', root.path)];

        const results = await Promise.all(replicas.map((replica) => replica.provision(options, context)));

        const [first, second] = results.map(provisioned);
        expect(second).toEqual(first);
        const path = first?.spec?.nfs?.path.replace('/export/', '') ?? '';
        const leaf = path.split('/').pop() ?? '';
        const entries = await tree(root.path);
        expect(entries).toContain(path);
        expect(entries.filter((entry) => entry.includes('.kube-provisioner.tmp.'))).toEqual([]);
        expect(entries.filter((entry) => entry.endsWith(`.${leaf}.kube-provisioner.json`))).toHaveLength(1);
        expect(entries.filter((entry) => entry.startsWith(`${path}/`))).toEqual([]);
      }
    },
  );
});
