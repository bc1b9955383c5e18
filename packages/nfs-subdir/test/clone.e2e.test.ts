/**
 * End-to-end: a claim whose `dataSource` is another claim gets a copy of its volume, made in the
 * background by the `nfs-subdir-provisioner` bin under the example RBAC against the real control
 * plane and a real NFS server: a 10 000-file tree with a hard link and a link out of the volume
 * arrives identical, and the source's cloning-protection finalizer is gone afterwards.
 */
import { createHash } from 'node:crypto';
import { link, lstat, mkdir, readdir, readFile, readlink, symlink, writeFile } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { bindClaim, waitFor, workspaceBinCommand } from '@kube-provisioner/testenv';
import { nfsToolsAvailable, useNfsProvisioners, useTestEnv } from '@kube-provisioner/testenv/testing';
import { CoreV1Api } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { finalizerCloningProtection } from '../src/clone-source.ts';

const env = useTestEnv();
const packageDir = join(import.meta.dirname, '..');
const provisioners = useNfsProvisioners(env, {
  command: workspaceBinCommand(packageDir, 'nfs-subdir-provisioner'),
  deployDir: join(packageDir, '..', '..', 'examples', 'nfs', 'deploy'),
  prefix: 'nfs-clone',
  expectedDenials: /Cannot watch the lease/u,
});

/** Relative paths below `dir`, sorted, entering only real directories (`readdir`'s `recursive` follows links). */
async function entries(dir: string, prefix = ''): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(join(dir, prefix), { withFileTypes: true })) {
    const relative = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
    found.push(relative);
    if (entry.isDirectory()) found.push(...(await entries(dir, relative)));
  }
  return found.sort();
}

/** Every entry below `dir` with its type, mode, owner and content (or link text, or inode group). */
async function snapshot(dir: string): Promise<Record<string, string>> {
  const result: Record<string, string> = {};
  const inodes = new Map<number, string>();
  for (const entry of await entries(dir)) {
    const path = join(dir, entry);
    const stats = await lstat(path);
    const meta = `${(stats.mode & 0o7777).toString(8)} ${stats.uid}:${stats.gid}`;
    if (stats.isSymbolicLink()) result[entry] = `link ${await readlink(path)} ${meta}`;
    else if (stats.isDirectory()) result[entry] = `dir ${meta}`;
    else {
      const digest = createHash('sha256')
        .update(await readFile(path))
        .digest('hex');
      const first = inodes.get(stats.ino) ?? entry;
      inodes.set(stats.ino, first);
      result[entry] = `file ${digest} ${meta} same-as ${first}`;
    }
  }
  return result;
}

describe.skipIf(!nfsToolsAvailable())('cloning a claim with nfs-subdir-provisioner', () => {
  it('copies a 10 000-file tree exactly, in the background, and releases the source', async () => {
    const deployment = await provisioners.deploy('/export');
    const storageClassName = await provisioners.storageClass(deployment, { onDelete: 'delete' });
    const namespace = await env.namespace('clone');
    const source = await bindClaim(env.kubeConfig, { namespace, name: 'src', storageClassName });
    const sourceDir = join(
      deployment.server.exportDir,
      posix.relative(deployment.server.exportPath, source.spec?.nfs?.path ?? ''),
    );
    for (let d = 0; d < 100; d++) {
      await mkdir(join(sourceDir, `d${d}`));
      await Promise.all(
        Array.from({ length: 100 }, (_, f) =>
          writeFile(join(sourceDir, `d${d}`, `f${f}`), `file ${d}/${f}\n`),
        ),
      );
    }
    await link(join(sourceDir, 'd0/f0'), join(sourceDir, 'hard'));
    await symlink('/etc', join(sourceDir, 'out'));

    const core = env.kubeConfig.makeApiClient(CoreV1Api);
    await core.createNamespacedPersistentVolumeClaim({
      namespace,
      body: {
        metadata: { name: 'copy' },
        spec: {
          storageClassName,
          accessModes: ['ReadWriteMany'],
          resources: { requests: { storage: '1Gi' } },
          dataSource: { kind: 'PersistentVolumeClaim', name: 'src' },
        },
      },
    });
    const copy = await waitFor(
      async () => {
        const claim = await core.readNamespacedPersistentVolumeClaim({ namespace, name: 'copy' });
        return claim.status?.phase === 'Bound' ? claim : undefined;
      },
      { timeoutMs: 180_000, description: 'the clone to be Bound' },
    );

    const pv = await core.readPersistentVolume({ name: copy.spec?.volumeName ?? '' });
    const copyDir = join(
      deployment.server.exportDir,
      posix.relative(deployment.server.exportPath, pv.spec?.nfs?.path ?? ''),
    );
    expect(Object.keys(await snapshot(copyDir))).toHaveLength(10_102);
    expect(await snapshot(copyDir)).toEqual(await snapshot(sourceDir));
    // In the background: the claim's events show the copy starting (the Go library's ProvisioningInBackground).
    const fieldSelector = 'involvedObject.name=copy,reason=ProvisioningFailed';
    const { items } = await core.listNamespacedEvent({ namespace, fieldSelector });
    expect(items.map((event) => event.message)).toContainEqual(
      expect.stringMatching(new RegExp(`^cloning ${namespace}/src into .*: started$`, 'u')),
    );
    const sourceClaim = await core.readNamespacedPersistentVolumeClaim({ namespace, name: 'src' });
    expect(sourceClaim.metadata?.finalizers ?? []).not.toContain(finalizerCloningProtection);
  });
});
