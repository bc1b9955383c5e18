/**
 * What a kernel NFS client does that a local directory hides, each checked against the bundled
 * `nfs-subdir-provisioner` running in the test guest on a `mount -t nfs4` of a nfs-ganesha export
 * (see `nfs-subdir.kernel-mount.e2e.test.ts` for the lifecycle): `root_squash`, files deleted while
 * held open ("silly renames"), the server restarting under the provisioner, and read-only and full
 * exports. The README's "On a kernel NFS mount" section says what each test shows.
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { bindClaim, createClaims, deleteClaimAndVolume, waitFor } from '@kube-provisioner/testenv';
import { useTestEnv } from '@kube-provisioner/testenv/testing';
import { CoreV1Api, type CoreV1Event, type V1PersistentVolume } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { useGuestExampleDeployment } from './example-deployment.ts';

const env = useTestEnv();
const core = env.kubeConfig.makeApiClient(CoreV1Api);
const provisioners = useGuestExampleDeployment(env, 'subdir-nfs');
const { guest, storageClass, mountVolume } = provisioners;
/** A workload's user: not root, so neither squashed nor privileged. */
const workload = { uid: 1000, gid: 1000 };
const timeoutMs = 90_000;

/** The Events with `reason` about object `name` (a claim of `namespace`, or a PV), once there is one. */
function eventsAbout(name: string, reason: string, namespace?: string): Promise<CoreV1Event[]> {
  const fieldSelector = `involvedObject.name=${name},reason=${reason}`;
  return waitFor(
    async () => {
      const { items } = namespace
        ? await core.listNamespacedEvent({ namespace, fieldSelector })
        : await core.listEventForAllNamespaces({ fieldSelector });
      // kube-controller-manager's own ProvisioningFailed ("storageclass … not found"), when a claim
      // reaches it before its class does, is not the provisioner's.
      const ours = items.filter((event) => event.source?.component !== 'persistentvolume-controller');
      return ours.length > 0 ? ours : undefined;
    },
    { timeoutMs, description: `a ${reason} event about ${name}` },
  );
}

function volumeGone(pv: V1PersistentVolume): Promise<true> {
  return waitFor(
    async () =>
      (await core.listPersistentVolume()).items.every((item) => item.metadata?.name !== pv.metadata?.name),
    { timeoutMs, description: `PV ${pv.metadata?.name} to be deleted` },
  );
}

/** Every path below `dir` (dot files too), sorted, with the content of files. */
async function tree(dir: string): Promise<Record<string, string>> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const result: Record<string, string> = {};
  for (const entry of entries) {
    const path = join(entry.parentPath, entry.name).slice(dir.length + 1);
    result[path] = entry.isFile() ? await readFile(join(dir, path), 'utf8') : '<dir>';
  }
  return Object.fromEntries(Object.entries(result).sort(([a], [b]) => a.localeCompare(b)));
}

/**
 * A claim bound on a root_squash export writable by all, whose class does `onDelete`, holding files
 * the workload's user wrote at two levels and a subdirectory only that user may change.
 */
async function squashedVolumeWithWorkloadData(onDelete: string) {
  const deployment = await provisioners.deploy({ server: { squash: 'root' }, exportMode: 0o777 });
  const namespace = await env.namespace('squash');
  const pv = await bindClaim(env.kubeConfig, {
    namespace,
    name: 'data',
    storageClassName: await storageClass(deployment, { onDelete }),
  });
  const mount = await mountVolume(deployment, pv);
  try {
    await (await guest()).sh(
      'cd "$1" && echo top > top.txt && mkdir -p sub/deeper && echo f > sub/f && echo g > sub/deeper/g && chmod 755 sub sub/deeper',
      { user: workload, args: [mount.mountPoint] },
    );
  } finally {
    await mount.unmount();
  }
  return { deployment, namespace, pv };
}

describe.skipIf(!provisioners.available())('nfs-subdir-provisioner on kernel NFS semantics', () => {
  describe('an export with root_squash', () => {
    it('refuses to provision in a root-owned export with one event naming root_squash, creating nothing', async () => {
      const deployment = await provisioners.deploy({ server: { squash: 'root' } });
      const namespace = await env.namespace('squash');
      await createClaims(env.kubeConfig, {
        namespace,
        storageClassName: await storageClass(deployment),
        names: ['data'],
      });

      const [event, ...more] = await eventsAbout('data', 'ProvisioningFailed', namespace);
      expect(more).toEqual([]);
      expect(event?.message).toMatch(/root is refused on the NFS mount .*squashes root \(root_squash\)/u);
      expect(event?.message).toContain('export it with no_root_squash');
      expect(await tree(deployment.exportDir)).toEqual({});
    });

    it('deletes nothing of a volume it cannot empty, says why, and finishes once the files are removable', async () => {
      const { deployment, namespace, pv } = await squashedVolumeWithWorkloadData('delete');
      const before = await tree(deployment.exportDir);
      await core.deleteNamespacedPersistentVolumeClaim({ namespace, name: 'data' });

      const [event] = await eventsAbout(pv.metadata?.name ?? '', 'VolumeFailedDelete');
      expect(event?.message).toMatch(
        /^access ".*\/sub": permission denied \(EACCES\): root is refused .*root_squash/u,
      );
      // Everything stays, the record too (not even stamped: the removal never began).
      expect(await tree(deployment.exportDir)).toEqual(before);

      // What an administrator does: let the squashed user remove the workload's files.
      const volume = (pv.spec?.nfs?.path ?? '').slice(deployment.endpoint.exportPath.length);
      await (await guest()).sh('chmod -R a+rwX "$1"', {
        user: workload,
        args: [`${deployment.mount.mountPoint}${volume}/sub`],
      });
      await volumeGone(pv);
      expect(await tree(deployment.exportDir)).toEqual({});
    });

    it("archives a volume holding another user's files: the rename needs no permission inside it", async () => {
      const { deployment, namespace, pv } = await squashedVolumeWithWorkloadData('archive');
      const relative = `${namespace}-data-${pv.metadata?.name}`;
      await deleteClaimAndVolume(env.kubeConfig, pv, timeoutMs);
      const archived = await tree(join(deployment.exportDir, `archived-${relative}`));
      expect(archived).toEqual({
        sub: '<dir>',
        'sub/deeper': '<dir>',
        'sub/deeper/g': 'g\n',
        'sub/f': 'f\n',
        'top.txt': 'top\n',
      });
    });
  });

  describe('a file held open by a process of the same NFS client', () => {
    /** A bound volume with `held.txt` (held open by a `tail -f` in the guest), `other.txt` and `sub/x`. */
    async function volumeWithOpenFile(onDelete: string) {
      const deployment = await provisioners.deploy();
      const namespace = await env.namespace('held');
      const storageClassName = await storageClass(deployment, { onDelete });
      const pv = await bindClaim(env.kubeConfig, { namespace, name: 'data', storageClassName });
      const mount = await mountVolume(deployment, pv);
      const vm = await guest();
      await vm.sh(
        'cd "$1" && echo held > held.txt && echo other > other.txt && mkdir sub && echo x > sub/x',
        {
          args: [mount.mountPoint],
        },
      );
      const holder = await vm.spawn(['tail', '-f', `${mount.mountPoint}/held.txt`]);
      await holder.waitForOutput(/held/u);
      return {
        deployment,
        namespace,
        pv,
        mount,
        holder,
        relative: `${namespace}-data-${pv.metadata?.name}`,
      };
    }

    it('postpones the delete on the .nfs file the client keeps, and removes it all once the file is closed', async () => {
      const { deployment, namespace, pv, mount, holder, relative } = await volumeWithOpenFile('delete');
      await core.deleteNamespacedPersistentVolumeClaim({ namespace, name: 'data' });

      // Postponed, not failed: a Normal event, the delete retried with the usual backoff.
      const [event] = await eventsAbout(pv.metadata?.name ?? '', 'VolumeDelete');
      expect(event?.type).toBe('Normal');
      expect(event?.message).toMatch(
        /^unlink ".*\/\.nfs[0-9a-f]+": resource busy or locked \(EBUSY\): a process using this NFS client still holds the file open/u,
      );
      // The rest went; the open file stays, renamed by the kernel, until it is closed.
      const left = Object.keys(await tree(join(deployment.exportDir, relative)));
      expect(left).toEqual([expect.stringMatching(/^\.nfs[0-9a-f]+$/u)]);

      await holder.stop();
      await mount.unmount();
      await volumeGone(pv);
      expect(await tree(deployment.exportDir)).toEqual({});
    });

    it('archives with the file still open, and leaves nothing extra once it is closed', async () => {
      const { deployment, pv, mount, holder, relative } = await volumeWithOpenFile('archive');
      await deleteClaimAndVolume(env.kubeConfig, pv, timeoutMs);
      await holder.stop();
      await mount.unmount();
      expect(await tree(join(deployment.exportDir, `archived-${relative}`))).toEqual({
        'held.txt': 'held\n',
        'other.txt': 'other\n',
        sub: '<dir>',
        'sub/x': 'x\n',
      });
      expect(Object.keys(await tree(deployment.exportDir)).filter((path) => /\.nfs/u.test(path))).toEqual([]);
    });
  });

  it('provisions and deletes across a server restart, with no duplicate, no loss and no provisioner restart', async () => {
    const deployment = await provisioners.deploy();
    const namespace = await env.namespace('restart');
    const storageClassName = await storageClass(deployment, { onDelete: 'delete' });
    const before = await bindClaim(env.kubeConfig, { namespace, name: 'before', storageClassName });

    await deployment.stopServer();
    await createClaims(env.kubeConfig, { namespace, storageClassName, names: ['during-1', 'during-2'] });
    await core.deleteNamespacedPersistentVolumeClaim({ namespace, name: 'before' });
    // The provisioner took the work up: its file system calls wait in the kernel for the server.
    await eventsAbout('during-1', 'Provisioning', namespace);
    await eventsAbout('during-2', 'Provisioning', namespace);
    await deployment.startServer();

    await volumeGone(before);
    const after = await bindClaim(env.kubeConfig, { namespace, name: 'after', storageClassName });
    const bound = await waitFor(
      async () => {
        const { items } = await core.listNamespacedPersistentVolumeClaim({ namespace });
        return items.every((claim) => claim.status?.phase === 'Bound') ? items : undefined;
      },
      { timeoutMs, description: 'every claim to be bound' },
    );
    expect(bound.map((claim) => claim.metadata?.name).sort()).toEqual(['after', 'during-1', 'during-2']);
    const expected = bound.map((claim) => `${namespace}-${claim.metadata?.name}-${claim.spec?.volumeName}`);
    expect(await provisioners.entries(deployment)).toEqual(expected.sort());
    expect(expected).toContain(`${namespace}-after-${after.metadata?.name}`);
    expect(deployment.program.output()).not.toMatch(/ProvisioningFailed|VolumeFailedDelete/u);
  });

  it('refuses to provision on a read-only export with an event saying so, creating nothing', async () => {
    const deployment = await provisioners.deploy({ server: { readOnly: true } });
    const namespace = await env.namespace('readonly');
    await createClaims(env.kubeConfig, {
      namespace,
      storageClassName: await storageClass(deployment),
      names: ['data'],
    });
    const [event, ...more] = await eventsAbout('data', 'ProvisioningFailed', namespace);
    expect(more).toEqual([]);
    expect(event?.message).toMatch(/read-only file system \(EROFS\): the export is read-only/u);
    expect(await tree(deployment.exportDir)).toEqual({});
  });

  it('fails a claim on a full export leaving nothing, keeps the other volumes, binds once there is room', async () => {
    const deployment = await provisioners.deploy({ exportSizeMiB: 4 });
    const namespace = await env.namespace('full');
    const storageClassName = await storageClass(deployment);
    const kept = await bindClaim(env.kubeConfig, { namespace, name: 'kept', storageClassName });
    const keptDir = await provisioners.reachVolume(deployment, kept);
    const before = await tree(deployment.exportDir);
    const filler = join(deployment.exportDir, '.filler');
    fillUp(filler);

    await createClaims(env.kubeConfig, { namespace, storageClassName, names: ['late'] });
    const [event] = await eventsAbout('late', 'ProvisioningFailed', namespace);
    expect(event?.message).toMatch(/no space left on device \(ENOSPC\): the export is full/u);
    const { '.filler': _filler, ...rest } = await tree(deployment.exportDir);
    expect(rest).toEqual(before);

    await rm(filler);
    const late = await waitFor(
      async () => {
        const claim = await core.readNamespacedPersistentVolumeClaim({ namespace, name: 'late' });
        return claim.status?.phase === 'Bound' ? claim : undefined;
      },
      { timeoutMs, description: 'claim late to bind once the export has room' },
    );
    expect(await provisioners.entries(deployment)).toEqual(
      [keptDir, `${namespace}-late-${late.spec?.volumeName}`].sort(),
    );
    expect(await readFile(join(deployment.exportDir, keptDir, 'probe.txt'), 'utf8')).toBe(
      `probe for ${kept.metadata?.name}\n`,
    );
  });
});

/** Writes `file` until its file system has no room left. */
function fillUp(file: string): void {
  const chunk = Buffer.alloc(64 * 1024);
  const fd = openSync(file, 'w');
  try {
    for (;;) writeSync(fd, chunk);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  } finally {
    closeSync(fd);
  }
}
