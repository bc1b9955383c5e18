/**
 * End-to-end on a real kernel with project quotas (the test guest): the bundled
 * `kube-hostpath-provisioner` runs inside the guest, under the shipped RBAC against the real control
 * plane, on a root of XFS or ext4 mounted with `prjquota`. A claim of a class with `enforceSize` gets a
 * volume a non-root workload cannot write past, whose usage is read from quota accounting; a resize
 * raises the limit; deleting the claim removes it. The volume's files are limited too: a workload making
 * more than the class's `inodeLimit` is refused by the kernel. A root without `prjquota` refuses such a
 * class with one event naming the mount option.
 * A clone into such a class is counted against its own new project; a source using more than the
 * limit fails the clone with one event and leaves nothing, on ext4 too, where the kernel lets the
 * provisioner (root) past the limit.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { volumeStatsMetrics } from '@kube-provisioner/controller/usage';
import { applyManifests, bindClaim, deleteClaimAndVolume, waitFor } from '@kube-provisioner/testenv';
import {
  createQuotaFileSystem,
  type Guest,
  type GuestProgram,
  guestUser,
} from '@kube-provisioner/testenv/guest';
import { bundleProgram } from '@kube-provisioner/testenv/internal';
import {
  guestAvailable,
  guestLeaseFlags,
  uniqueName,
  useGuest,
  useTestEnv,
} from '@kube-provisioner/testenv/testing';
import { CoreV1Api, type KubernetesObject, loadAllYaml, StorageV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const env = useTestEnv();
const guest = useGuest();
const core = env.kubeConfig.makeApiClient(CoreV1Api);
const storage = env.kubeConfig.makeApiClient(StorageV1Api);
const packageDir = join(import.meta.dirname, '..');
const systemNamespace = 'kube-provisioner-hostpath';
const writer = { uid: guestUser.uid, gid: guestUser.gid };
// A loaded CI host slows the one-CPU guest several times over: each step may take minutes there.
const timeoutMs = 240_000;
const programs: GuestProgram[] = [];
let program = '';
let kubeconfig = '';

beforeAll(async () => {
  if (!guestAvailable()) return;
  const vm = await guest();
  const rbac = await readFile(join(packageDir, 'deploy', 'rbac.yaml'), 'utf8');
  await applyManifests(env.kubeConfig, loadAllYaml(rbac) as KubernetesObject[]);
  const account = await env.serviceAccountKubeconfig({
    namespace: systemNamespace,
    name: 'hostpath-provisioner',
  });
  const outfile = join(vm.shareDir, 'bin', 'kube-hostpath-provisioner.mjs');
  await bundleProgram({ entry: join(packageDir, 'src', 'cli.ts'), outfile });
  program = vm.guestPath(outfile);
  kubeconfig = await vm.kubeconfig(account.kubeconfigPath);
}, 300_000);

afterAll(async () => {
  await Promise.all(programs.map(stopProvisioner));
});

/**
 * Stops a provisioner the way kubelet would, with a grace period sized for the slow guest; throws,
 * with the end of its output (where the cause is), unless it stopped cleanly and was never denied.
 */
async function stopProvisioner(running: GuestProgram): Promise<void> {
  programs.splice(programs.indexOf(running), 1);
  const code = await running.stop(60_000);
  const output = running.output();
  if (code !== 0) throw new Error(`the provisioner exited with ${code}:\n${output.slice(-6000)}`);
  const denied = /^.*(forbidden|"statusCode":403).*$/imu.exec(output);
  if (denied) throw new Error(`the provisioner was denied: ${denied[0]}`);
}

let healthPort = 18_080;

/**
 * Starts the provisioner in the guest on `root`, measuring usage every second at one file-system call
 * a second: a walk of more than a second's files never finishes. Resolves with its provisioner name
 * and its metrics port inside the guest.
 */
async function startProvisioner(
  vm: Guest,
  root: string,
): Promise<{ provisionerName: string; port: number; running: GuestProgram }> {
  const provisionerName = `e2e.kube-provisioner.io/${uniqueName('enforced')}`;
  const port = healthPort++;
  await vm.sh('mkdir -p "$1"', { args: [root] });
  const running = await vm.spawn(
    [
      'node',
      program,
      '--mode=shared',
      `--provisioner-name=${provisionerName}`,
      `--root=${root}`,
      '--usage-interval=1s',
      '--usage-scan-rate=1',
      ...guestLeaseFlags,
    ],
    { env: { KUBECONFIG: kubeconfig, POD_NAMESPACE: systemNamespace, HEALTH_PORT: String(port) } },
  );
  programs.push(running);
  return { provisionerName, port, running };
}

/** The value of `metric` for PV `pvName` on the guest program's `/metrics`; `undefined` when absent. */
async function scrape(vm: Guest, port: number, metric: string, pvName: string): Promise<number | undefined> {
  const text = await vm.sh('node -e "fetch(process.argv[1]).then((r) => r.text()).then(console.log)" "$1"', {
    args: [`http://127.0.0.1:${port}/metrics`],
  });
  const line = text
    .split('\n')
    .find((l) => l.startsWith(`${metric}{`) && l.includes(`persistentvolume="${pvName}"`));
  return line === undefined ? undefined : Number(line.split(' ').at(-1));
}

async function enforcedClass(
  provisionerName: string,
  parameters: Record<string, string> = { enforceSize: 'true' },
): Promise<string> {
  const name = uniqueName('enforced');
  await storage.createStorageClass({
    body: {
      metadata: { name },
      provisioner: provisionerName,
      parameters,
      reclaimPolicy: 'Delete',
      volumeBindingMode: 'Immediate',
      allowVolumeExpansion: true,
    },
  });
  return name;
}

/** Appends `mib` MiB to `file` as the workload user; resolves with dd's exit status and message. */
async function append(
  vm: Guest,
  file: string,
  mib: number,
  from: '/dev/zero' | '/dev/urandom' = '/dev/zero',
): Promise<{ status: number | null; stderr: string }> {
  const script = `dd if=${from} bs=1M count="$2" conv=fsync iflag=fullblock status=none >> "$1"`;
  return vm.run(['sh', '-c', script, 'sh', file, String(mib)], { user: writer });
}

/** Each project's used and hard-limit KiB on the mount, as its quota report says. */
async function projects(
  vm: Guest,
  type: 'xfs' | 'ext4',
  mountPoint: string,
): Promise<Map<number, { usedKiB: number; hardKiB: number }>> {
  const foreign = type === 'ext4' ? '-f ' : '';
  const report = await vm.sh(`xfs_quota ${foreign}-x -c "report -p -n -N -b" "$1"`, { args: [mountPoint] });
  const found = new Map<number, { usedKiB: number; hardKiB: number }>();
  for (const line of report.split('\n')) {
    const [id, used, , hard] = line.trim().split(/\s+/u);
    if (id?.startsWith('#')) found.set(Number(id.slice(1)), { usedKiB: Number(used), hardKiB: Number(hard) });
  }
  return found;
}

/** Each project's used inodes and hard inode limit on the mount, as its quota report says. */
async function inodeQuotas(
  vm: Guest,
  type: 'xfs' | 'ext4',
  mountPoint: string,
): Promise<Map<number, { used: number; hard: number }>> {
  const foreign = type === 'ext4' ? '-f ' : '';
  const report = await vm.sh(`xfs_quota ${foreign}-x -c "report -p -n -N -i" "$1"`, { args: [mountPoint] });
  const found = new Map<number, { used: number; hard: number }>();
  for (const line of report.split('\n')) {
    const [id, used, , hard] = line.trim().split(/\s+/u);
    if (id?.startsWith('#')) found.set(Number(id.slice(1)), { used: Number(used), hard: Number(hard) });
  }
  return found;
}

/** The hard block limit, in KiB, of every project with one on the mount. */
async function hardLimits(vm: Guest, type: 'xfs' | 'ext4', mountPoint: string): Promise<Map<number, number>> {
  const limits = new Map<number, number>();
  for (const [id, { hardKiB }] of await projects(vm, type, mountPoint))
    if (hardKiB > 0) limits.set(id, hardKiB);
  return limits;
}

/** Creates claim `name` of `storageClassName`, a clone of claim `source` of its namespace. */
async function createClone(namespace: string, name: string, storageClassName: string, source: string) {
  await core.createNamespacedPersistentVolumeClaim({
    namespace,
    body: {
      metadata: { name },
      spec: {
        storageClassName,
        accessModes: ['ReadWriteOnce'],
        resources: { requests: { storage: '8Mi' } },
        dataSource: { kind: 'PersistentVolumeClaim', name: source },
      },
    },
  });
}

/** Runs `test` with a provisioner in the guest on a fresh quota file system of `type`, and a namespace. */
async function withQuotaRoot(
  type: 'xfs' | 'ext4',
  test: (setup: {
    vm: Guest;
    mountPoint: string;
    provisionerName: string;
    namespace: string;
  }) => Promise<void>,
): Promise<void> {
  const vm = await guest();
  const fileSystem = await createQuotaFileSystem(vm, { type });
  const { provisionerName, running } = await startProvisioner(vm, `${fileSystem.mountPoint}/volumes`);
  try {
    const namespace = await env.namespace(`enforced-clone-${type}`);
    await test({ vm, mountPoint: fileSystem.mountPoint, provisionerName, namespace });
  } finally {
    try {
      await stopProvisioner(running);
    } finally {
      await vm.sh('rm -rf "$1"/volumes', { args: [fileSystem.mountPoint] });
      await fileSystem.remove();
    }
  }
}

describe.skipIf(!guestAvailable())('enforced sizes on a root with project quotas', () => {
  it.each([
    ['xfs', /No space left on device/u],
    ['ext4', /Disk quota exceeded/u],
  ] as const)(
    'on %s: the workload is stopped at the request, a resize raises the limit, a delete removes it',
    {
      timeout: 4 * timeoutMs,
    },
    async (type, refusal) => {
      const vm = await guest();
      const fileSystem = await createQuotaFileSystem(vm, { type });
      const { provisionerName, port, running } = await startProvisioner(
        vm,
        `${fileSystem.mountPoint}/volumes`,
      );
      try {
        const namespace = await env.namespace(`enforced-${type}`);
        const storageClassName = await enforcedClass(provisionerName);
        const pv = await bindClaim(env.kubeConfig, {
          namespace,
          name: 'data',
          storageClassName,
          storage: '8Mi',
        });
        const file = `${pv.spec?.hostPath?.path}/data`;
        expect([...(await hardLimits(vm, type, fileSystem.mountPoint)).values()]).toEqual([8 * 1024]);
        // inodeLimit "auto": one per 4 KiB of 8Mi is below the floor.
        expect((await inodeQuotas(vm, type, fileSystem.mountPoint)).get(1)?.hard).toBe(10_000);

        // 200 files first (a full XFS project takes no more inodes): at one call a second no walk could
        // count them within the interval.
        await vm.sh('cd "$1" && for i in $(seq 1 200); do : > "f$i"; done', {
          args: [pv.spec?.hostPath?.path ?? ''],
          user: writer,
        });
        const past = await append(vm, file, 12);
        expect(past.status).not.toBe(0);
        expect(past.stderr).toMatch(refusal);

        const pvName = pv.metadata?.name ?? '';
        const inodes = await waitFor(
          async () =>
            (await scrape(vm, port, volumeStatsMetrics.inodesUsed, pvName)) === 202 ? 202 : undefined,
          // Each scrape starts a node process in the guest's one CPU: polled slowly, so it never
          // starves the provisioner (and its lease renewals) under a loaded host.
          { timeoutMs, intervalMs: 2000, description: 'the usage from quota accounting' },
        );
        expect(inodes).toBe(202);
        const used = await scrape(vm, port, volumeStatsMetrics.usedBytes, pvName);
        expect(used).toBe(((await projects(vm, type, fileSystem.mountPoint)).get(1)?.usedKiB ?? 0) * 1024);

        await core.patchNamespacedPersistentVolumeClaim({
          namespace,
          name: 'data',
          body: [{ op: 'replace', path: '/spec/resources/requests/storage', value: '24Mi' }],
        });
        await waitFor(
          async () => (await hardLimits(vm, type, fileSystem.mountPoint)).get(1) === 24 * 1024 || undefined,
          { timeoutMs, intervalMs: 1000, description: 'the limit to be raised' },
        );
        await waitFor(
          async () =>
            (await core.readNamespacedPersistentVolumeClaim({ namespace, name: 'data' })).status?.capacity
              ?.storage === '24Mi' || undefined,
          { timeoutMs, description: 'the claim to show 24Mi' },
        );
        expect((await append(vm, file, 12)).status).toBe(0);
        const beyond = await append(vm, file, 12);
        expect(beyond.stderr).toMatch(refusal);

        await deleteClaimAndVolume(env.kubeConfig, pv);
        expect(await hardLimits(vm, type, fileSystem.mountPoint)).toEqual(new Map());
      } finally {
        // Stopped before its root is unmounted, as kubelet would stop the pod before the node's disk goes.
        try {
          await stopProvisioner(running);
        } finally {
          await vm.sh('rm -rf "$1"/volumes', { args: [fileSystem.mountPoint] });
          await fileSystem.remove();
        }
      }
    },
  );

  it.each([
    ['xfs', /No space left on device/u],
    ['ext4', /Disk quota exceeded/u],
  ] as const)(
    'on %s: a workload making more files than inodeLimit is refused by the kernel, with bytes to spare',
    { timeout: 2 * timeoutMs },
    async (type, refusal) => {
      await withQuotaRoot(type, async ({ vm, mountPoint, provisionerName, namespace }) => {
        const storageClassName = await enforcedClass(provisionerName, {
          enforceSize: 'true',
          inodeLimit: '50',
        });
        const pv = await bindClaim(env.kubeConfig, {
          namespace,
          name: 'data',
          storageClassName,
          storage: '8Mi',
        });
        // The new project holds its directory alone.
        expect((await inodeQuotas(vm, type, mountPoint)).get(1)).toEqual({ used: 1, hard: 50 });

        // Empty files take no block: only the inode limit stops them. The first refused create ends sh.
        const made = await vm.run(
          [
            'sh',
            '-c',
            'cd "$1" && for i in $(seq 1 100); do : > "f$i" || exit 1; done',
            'sh',
            pv.spec?.hostPath?.path ?? '',
          ],
          { user: writer },
        );
        expect(made.status).not.toBe(0);
        expect(made.stderr).toMatch(refusal);
        // The volume's directory and 49 files: the limit, exactly.
        expect((await inodeQuotas(vm, type, mountPoint)).get(1)).toEqual({ used: 50, hard: 50 });
        const files = await vm.sh('ls -A "$1" | wc -l', { args: [pv.spec?.hostPath?.path ?? ''] });
        expect(Number(files.trim())).toBe(49);

        await deleteClaimAndVolume(env.kubeConfig, pv);
        const limited = [...(await inodeQuotas(vm, type, mountPoint)).values()].filter(
          ({ hard }) => hard > 0,
        );
        expect(limited).toEqual([]);
      });
    },
  );

  it('refuses a class asking for enforcement on a root without prjquota, with one event naming it', {
    timeout: 2 * timeoutMs,
  }, async () => {
    const vm = await guest();
    const { provisionerName, running } = await startProvisioner(vm, '/var/tmp/unenforced');
    const namespace = await env.namespace('unenforced');
    const storageClassName = await enforcedClass(provisionerName);
    await core.createNamespacedPersistentVolumeClaim({
      namespace,
      body: {
        metadata: { name: 'data' },
        spec: {
          storageClassName,
          accessModes: ['ReadWriteOnce'],
          resources: { requests: { storage: '8Mi' } },
        },
      },
    });
    const failures = async () =>
      (await core.listNamespacedEvent({ namespace })).items.filter(
        // kube-controller-manager's own ProvisioningFailed ("storageclass … not found") when the claim
        // reaches it before the class does is not the provisioner's.
        (event) =>
          event.reason === 'ProvisioningFailed' && event.source?.component !== 'persistentvolume-controller',
      );
    const [event] = await waitFor(async () => ((await failures()).length > 0 ? failures() : undefined), {
      timeoutMs,
      description: 'the ProvisioningFailed event',
    });
    expect(await failures()).toHaveLength(1);
    expect(event?.count ?? 1).toBe(1);
    expect(event?.message).toMatch(
      /without the mount option "prjquota": mount it with -o prjquota|has no project quotas/u,
    );
    const claim = await core.readNamespacedPersistentVolumeClaim({ namespace, name: 'data' });
    expect(claim.status?.phase).toBe('Pending');
    expect(await vm.sh('ls -A /var/tmp/unenforced')).toBe('');
    await stopProvisioner(running);
  });

  it('clones a tree into an enforced class: Bound, identical, counted against the new project', {
    timeout: 2 * timeoutMs,
  }, async () => {
    await withQuotaRoot('xfs', async ({ vm, mountPoint, provisionerName, namespace }) => {
      const plain = await enforcedClass(provisionerName, {});
      const source = await bindClaim(env.kubeConfig, {
        namespace,
        name: 'src',
        storageClassName: plain,
        storage: '8Mi',
      });
      const sourceDir = source.spec?.hostPath?.path ?? '';
      await vm.sh('cd "$1" && mkdir -p a/b && head -c 3145728 /dev/urandom > a/b/big && echo hi > top', {
        args: [sourceDir],
        user: writer,
      });

      await createClone(namespace, 'copy', await enforcedClass(provisionerName), 'src');

      const name = await waitFor(
        async () => {
          const claim = await core.readNamespacedPersistentVolumeClaim({ namespace, name: 'copy' });
          return claim.status?.phase === 'Bound' ? claim.spec?.volumeName : undefined;
        },
        { timeoutMs, intervalMs: 1000, description: 'the clone to be Bound' },
      );
      const copyDir = (await core.readPersistentVolume({ name })).spec?.hostPath?.path ?? '';
      const sums = 'cd "$1" && find . -type f | sort | xargs sha256sum';
      expect(await vm.sh(sums, { args: [copyDir] })).toBe(await vm.sh(sums, { args: [sourceDir] }));
      // The source has no project; the copy is project 1, whose accounting holds the copied bytes.
      const copied = (await projects(vm, 'xfs', mountPoint)).get(1);
      expect(copied?.hardKiB).toBe(8 * 1024);
      expect(copied?.usedKiB).toBeGreaterThanOrEqual(3 * 1024);
    });
  });

  // On ext4 the kernel lets the provisioner, running as root (CAP_SYS_RESOURCE), write past the
  // limit: the provisioner's own reading of the project's usage refuses the copy.
  it.each(['xfs', 'ext4'] as const)(
    'on %s: refuses, with one clear event and nothing left, a clone whose source uses more than the limit',
    { timeout: 2 * timeoutMs },
    async (type) => {
      await withQuotaRoot(type, async ({ vm, mountPoint, provisionerName, namespace }) => {
        const plain = await enforcedClass(provisionerName, {});
        const source = await bindClaim(env.kubeConfig, {
          namespace,
          name: 'src',
          storageClassName: plain,
          storage: '8Mi',
        });
        // An unenforced volume holds more than it asked for; data, not zeros, which a clone keeps as holes.
        expect((await append(vm, `${source.spec?.hostPath?.path}/big`, 12, '/dev/urandom')).status).toBe(0);
        const before = await vm.sh('ls -A "$1"/volumes', { args: [mountPoint] });

        await createClone(namespace, 'copy', await enforcedClass(provisionerName), 'src');

        const event = await waitFor(
          async () =>
            (await core.listNamespacedEvent({ namespace })).items.find(
              // Progress reports share the reason; they start with what is being cloned.
              (item) =>
                item.reason === 'ProvisioningFailed' &&
                item.involvedObject.name === 'copy' &&
                !item.message?.startsWith('cloning '),
            ),
          { timeoutMs, intervalMs: 1000, description: 'the clone to be refused' },
        );
        expect(event.message).toContain("does not fit the new volume's limit of 8388608 bytes");
        const claim = await core.readNamespacedPersistentVolumeClaim({ namespace, name: 'copy' });
        expect(claim.status?.phase).toBe('Pending');
        // A retry of the claim may be copying again, and removes its copy again: nothing stays.
        await waitFor(async () => (await vm.sh('ls -A "$1"/volumes', { args: [mountPoint] })) === before, {
          timeoutMs,
          description: 'nothing but the source left in the root',
        });
        expect(await hardLimits(vm, type, mountPoint)).toEqual(new Map());
      });
    },
  );
});
