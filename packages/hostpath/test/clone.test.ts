import { chmod, link, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { finalizerCloningProtection } from '@kube-provisioner/controller/clone';
import { describe, expect, it } from 'vitest';
import { HostPathProvisioner } from '../src/hostpath-provisioner.ts';
import { api, boundSource, cloneOptions, hostpath, untilFinished } from './clone-fixtures.ts';
import { context, failed, provisioned, storageClass, temporaryRoot } from './fixtures.ts';

describe('cloning a claim on a hostpath root', () => {
  it('copies the source tree (files, hard links, modes) into a new volume, protecting the source meanwhile', async () => {
    await using root = await temporaryRoot();
    const { bound, pv, dir } = await boundSource(root.path);
    await mkdir(join(dir, 'sub'));
    await writeFile(join(dir, 'sub/a.txt'), 'alpha');
    await link(join(dir, 'sub/a.txt'), join(dir, 'b.txt'));
    await chmod(join(dir, 'sub'), 0o750);
    const fake = api(bound, pv);
    const provisioner = hostpath(root.path, undefined, fake.access);
    const options = cloneOptions();

    const copy = provisioned(await untilFinished(() => provisioner.provision(options, context)));

    const copyDir = copy.spec?.hostPath?.path ?? '';
    expect(copyDir).not.toBe(dir);
    expect(await readFile(join(copyDir, 'sub/a.txt'), 'utf8')).toBe('alpha');
    expect((await stat(join(copyDir, 'b.txt'))).ino).toBe((await stat(join(copyDir, 'sub/a.txt'))).ino);
    expect((await stat(join(copyDir, 'sub'))).mode & 0o777).toBe(0o750);
    expect(fake.patches).toEqual([
      { metadata: { finalizers: [finalizerCloningProtection] } },
      { metadata: { '$deleteFromPrimitiveList/finalizers': [finalizerCloningProtection] } },
    ]);
    expect(provisioner.dataSources).toEqual([{ apiGroup: '', kind: 'PersistentVolumeClaim' }]);
  });

  it('refuses, in per-node mode, a source on another node, naming it', async () => {
    await using root = await temporaryRoot();
    const { bound, pv } = await boundSource(root.path, 'node-a');
    const fake = api(bound, pv);

    const result = await hostpath(root.path, 'node-b', fake.access).provision(
      cloneOptions(storageClass(), 'node-b'),
      context,
    );

    expect(failed(result, true).message).toContain(
      `the source volume ${pv.metadata?.name} is on node node-a, not node-b`,
    );
    expect(fake.patches).toEqual([]);
  });

  it('refuses a source outside its root', async () => {
    await using root = await temporaryRoot();
    await using other = await temporaryRoot();
    const { bound, pv } = await boundSource(other.path);
    const fake = api(bound, pv);

    const result = await hostpath(root.path, undefined, fake.access).provision(cloneOptions(), context);

    expect(failed(result, true).message).toContain(`is not a directory under ${root.path}`);
    expect(fake.patches).toEqual([]);
  });

  it('declares no data source without access to clone sources', () => {
    expect(new HostPathProvisioner({ mode: 'shared', root: '/srv/volumes' }).dataSources).toEqual([]);
  });
});
