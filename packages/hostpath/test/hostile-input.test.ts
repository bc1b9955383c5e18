// biome-ignore-all lint/suspicious/noTemplateCurlyInString: pathPattern placeholders are literal text, not JS templates
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HostPathProvisioner } from '../src/hostpath-provisioner.ts';
import {
  claim,
  context,
  failed,
  provisioned,
  provisionOptions,
  released,
  storageClass,
  temporaryRoot,
} from './fixtures.ts';

function provisioner(root: string): HostPathProvisioner {
  return new HostPathProvisioner({ mode: 'per-node', root, nodeName: 'node-a' });
}

const byAnnotation = storageClass({ pathPattern: '${.PVC.namespace}/${.PVC.annotations.path}' });

describe('hostile path patterns and claim metadata', () => {
  it.each([
    ['..', 'a ".." segment'],
    ['../../x', 'a ".." segment'],
    ['a/../../b', 'a ".." segment'],
    ['team-a/data/../../team-b/data', 'a ".." segment'],
    ['/etc', 'an empty segment'],
    ['a//b', 'an empty segment'],
    ['x\\..\\..', 'a backslash'],
    ['x'.repeat(300), 'longer than 255 bytes'],
  ])('refuses annotation %j with a clear infeasible error and creates nothing', async (value, reason) => {
    await using root = await temporaryRoot();
    const pvc = claim({ node: 'node-a', annotations: { path: value } });
    const error = failed(
      await provisioner(root.path).provision(provisionOptions(pvc, byAnnotation), context),
      true,
    );
    expect(error.message).toContain('parameter "pathPattern" does not give a usable directory');
    expect(error.message).toContain(reason.replace(/^an? /, ''));
    expect(await readdir(root.path)).toEqual([]);
  });

  it.each([
    ['${.PVC.annotations.missing}', 'it is empty'],
    ['${.PVC.annotations.missing}/.', 'it is empty'],
    ['/${.PVC.name}', 'it is absolute'],
    ['..', '".." segment'],
  ])('refuses pattern %j without falling back to another directory', async (pattern, reason) => {
    await using root = await temporaryRoot();
    const options = provisionOptions(claim({ node: 'node-a' }), storageClass({ pathPattern: pattern }));
    const error = failed(await provisioner(root.path).provision(options, context), true);
    expect(error.message).toContain(reason);
    expect(await readdir(root.path)).toEqual([]);
  });

  it('accepts unicode names and keeps them below the root', async () => {
    await using root = await temporaryRoot();
    const pvc = claim({ node: 'node-a', annotations: { path: 'données/日本語-🙂' } });
    const pv = provisioned(
      await provisioner(root.path).provision(provisionOptions(pvc, byAnnotation), context),
    );
    expect(pv.spec?.hostPath?.path).toBe(join(root.path, 'team-a', 'données', '日本語-🙂'));
  });
});

describe('symlinks planted in the root', () => {
  it('refuses to create through a symlinked parent and never writes outside', async () => {
    await using root = await temporaryRoot();
    await using outside = await temporaryRoot();
    await symlink(outside.path, join(root.path, 'team-a'));
    const pvc = claim({ node: 'node-a', annotations: { path: 'data' } });
    const error = failed(
      await provisioner(root.path).provision(provisionOptions(pvc, byAnnotation), context),
      false,
    );
    expect(error.message).toContain('symbolic link');
    expect(await readdir(outside.path)).toEqual([]);
  });

  it('refuses a symlink planted under the volume name', async () => {
    await using root = await temporaryRoot();
    await using outside = await temporaryRoot();
    const options = provisionOptions(claim({ node: 'node-a' }));
    await symlink(outside.path, join(root.path, options.pvName));
    const error = failed(await provisioner(root.path).provision(options, context), false);
    expect(error.message).toContain('symbolic link');
    expect(await readdir(outside.path)).toEqual([]);
  });

  it('deletes a volume holding a link to outside data by removing the link only', async () => {
    await using root = await temporaryRoot();
    await using outside = await temporaryRoot();
    await writeFile(join(outside.path, 'precious'), 'keep me');
    const instance = provisioner(root.path);
    const pvc = claim({ node: 'node-a' });
    const pv = released(provisioned(await instance.provision(provisionOptions(pvc), context)), pvc);
    const path = pv.spec?.hostPath?.path ?? '';
    await symlink(outside.path, join(path, 'escape'));
    await symlink('/', join(path, 'slash'));

    await instance.delete(pv, context);
    expect(existsSync(path)).toBe(false);
    expect(await readFile(join(outside.path, 'precious'), 'utf8')).toBe('keep me');
  });
});

describe('directories that belong to someone else', () => {
  const fixed = storageClass({ pathPattern: 'shared-data' });

  it("never hands one claim's directory to another", async () => {
    await using root = await temporaryRoot();
    const instance = provisioner(root.path);
    const first = claim({ node: 'node-a' });
    const pv = provisioned(await instance.provision(provisionOptions(first, fixed), context));
    await writeFile(join(pv.spec?.hostPath?.path ?? '', 'secret'), 'tenant a');

    const intruder = claim({ node: 'node-a', namespace: 'team-b' });
    const error = failed(await instance.provision(provisionOptions(intruder, fixed), context), false);
    expect(error.message).toContain('shared-data');
    expect(await readFile(join(root.path, 'shared-data', 'secret'), 'utf8')).toBe('tenant a');
  });

  it('refuses to adopt a pre-existing directory without an ownership record', async () => {
    await using root = await temporaryRoot();
    await mkdir(join(root.path, 'shared-data'));
    await writeFile(join(root.path, 'shared-data', 'old'), 'foreign');
    const error = failed(
      await provisioner(root.path).provision(provisionOptions(claim({ node: 'node-a' }), fixed), context),
      false,
    );
    expect(error.message).toContain('shared-data');
    expect(await readdir(join(root.path, 'shared-data'))).toEqual(['old']);
  });

  it("refuses to delete through a PV that points at another claim's directory", async () => {
    await using root = await temporaryRoot();
    const instance = provisioner(root.path);
    const owner = claim({ node: 'node-a' });
    const victim = provisioned(await instance.provision(provisionOptions(owner), context));
    const attacker = claim({ node: 'node-a' });
    const own = released(
      provisioned(await instance.provision(provisionOptions(attacker), context)),
      attacker,
    );
    const forged = {
      ...own,
      spec: { ...own.spec, hostPath: { path: victim.spec?.hostPath?.path ?? '', type: 'Directory' } },
    };

    await expect(instance.delete(forged, context)).rejects.toThrow();
    expect(existsSync(victim.spec?.hostPath?.path ?? '')).toBe(true);
  });
});
