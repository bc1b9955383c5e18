// biome-ignore-all lint/suspicious/noTemplateCurlyInString: pathPattern placeholders are literal text, not JS templates
import { lstat, mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { hostileClaim, hostileClaimText } from '@kube-provisioner/safe-fs/testing';
import type { V1PersistentVolume } from '@kubernetes/client-node';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  claim,
  context,
  nfsProvisioner,
  provisioned,
  provisionOptions,
  released,
  server,
  storageClass,
  temporaryRoot,
  tree,
} from './fixtures.ts';

describe('path containment', () => {
  it('never creates anything outside the export, whatever the claim metadata and pattern', async () => {
    await using sandbox = await temporaryRoot();
    const root = join(sandbox.path, 'export');
    await mkdir(root);
    const provisioner = nfsProvisioner('nfs-subdir', root);
    let created = 0;

    await fc.assert(
      fc.asyncProperty(hostileClaim, async ({ pathPattern, ...metadata }) => {
        const result = await provisioner.provision(
          provisionOptions(claim(metadata), storageClass({ pathPattern })),
          context,
        );
        if ('pv' in result) {
          const path = result.pv.spec?.nfs?.path ?? '';
          expect(path.startsWith('/export/')).toBe(true);
          expect(path.split('/')).not.toContain('..');
          expect((await lstat(join(root, path.slice('/export/'.length)))).isDirectory()).toBe(true);
          created += 1;
        }
      }),
      { numRuns: 300 },
    );
    // Not vacuous: plenty of inputs are legitimate and do get a directory.
    expect(created).toBeGreaterThan(30);
    expect(await readdir(sandbox.path)).toEqual(['export']);
  });

  it("never touches another claim's volume or anything outside, whatever path and name a PV carries", async () => {
    await using sandbox = await temporaryRoot();
    const root = join(sandbox.path, 'export');
    await mkdir(root);
    await writeFile(join(sandbox.path, 'outside'), 'keep');
    const provisioner = nfsProvisioner('nfs-subdir', root);
    const sc = storageClass({ pathPattern: '${.PVC.namespace}/${.PVC.name}', onDelete: 'delete' });
    const victim = provisioned(
      await provisioner.provision(
        provisionOptions(claim({ namespace: 'victim', name: 'victim' }), sc),
        context,
      ),
    );
    await writeFile(join(root, 'victim', 'victim', 'data'), 'keep');
    const before = await tree(sandbox.path);
    const pvPath = fc.oneof(
      fc.constant('/export/victim/victim'),
      hostileClaimText.map((rest) => `/export/${rest}`),
      hostileClaimText,
    );
    const pvName = fc.oneof(fc.constant('pvc-attacker'), hostileClaimText);

    await fc.assert(
      fc.asyncProperty(pvPath, pvName, fc.constantFrom('delete', 'archive'), async (path, name, policy) => {
        const forged: V1PersistentVolume = released(
          {
            ...victim,
            metadata: { name, annotations: { 'nfs.kube-provisioner.io/on-delete': policy } },
            spec: { ...victim.spec, nfs: { server, path } },
          },
          sc,
        );
        await provisioner.delete(forged, context).catch(() => undefined);
        // Deleting anything else may leave nothing behind that did not exist, but the victim's
        // files and everything outside the export must be exactly as before.
        const after = await tree(sandbox.path);
        for (const entry of before) expect(after).toContain(entry);
      }),
      { numRuns: 300 },
    );
  });
});
