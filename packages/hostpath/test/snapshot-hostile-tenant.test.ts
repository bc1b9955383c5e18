// A tenant owns the tree a snapshot copies, and may change it at any moment: widen a directory,
// swap a subdirectory for a link out of the root, truncate a file being copied, deepen a chain.
// Whatever it does while its claim is snapshotted, or while the snapshot is restored, nothing
// outside the root is read or written, every call returns, and a failed copy leaves nothing behind.
import { spawn } from 'node:child_process';
import { readlinkSync } from 'node:fs';
import { lstat, mkdtemp, readdir, readFile, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { createInterface } from 'node:readline';
import type { OperationContext } from '@kube-provisioner/controller';
import { SnapshotTaker, snapshotKind } from '@kube-provisioner/controller/snapshot';
import { type FsOps, type FsPath, nodeFsOps, snapshotPath, VolumeRoot } from '@kube-provisioner/safe-fs';
import { treeSnapshot } from '@kube-provisioner/safe-fs/testing';
import { describe, expect, it, onTestFinished } from 'vitest';
import { defaultProvisionerName, HostPathProvisioner } from '../src/hostpath-provisioner.ts';
import { hostPathSnapshotStorage } from '../src/snapshot-storage.ts';
import { boundSource, untilFinished } from './clone-fixtures.ts';
import { claim, context, provisioned, provisionOptions, temporaryRoot } from './fixtures.ts';
import { plantSentinel, plantTree, secretText, tenantStep } from './hostile-tenant.ts';
import { deleting, reconcileEach, snapshotOf, snapshotStore } from './snapshot-fixtures.ts';

/**
 * `nodeFsOps` that records every call whose directory is not below `base`: path calls name
 * `/proc/self/fd/<fd>/<name>`, and the descriptor's link says where that directory is now.
 */
function confinedFs(base: string, outside: string[]): FsOps {
  const check = (...paths: FsPath[]): void => {
    for (const path of paths) {
      const text = path.toString();
      const match = /^\/proc\/self\/fd\/(\d+)(\/[^/]+)?$/.exec(text);
      const dir = match === null ? text : readlinkSync(`/proc/self/fd/${match[1]}`);
      if (dir !== base && !dir.startsWith(`${base}/`)) outside.push(dir);
    }
  };
  return {
    ...nodeFsOps,
    open: (path, flags, mode) => {
      check(path);
      return nodeFsOps.open(path, flags, mode);
    },
    mkdir: (path, mode) => {
      check(path);
      return nodeFsOps.mkdir(path, mode);
    },
    lstat: (path) => {
      check(path);
      return nodeFsOps.lstat(path);
    },
    readdir: (path) => {
      check(path);
      return nodeFsOps.readdir(path);
    },
    opendir: (path, batchSize) => {
      check(path);
      return nodeFsOps.opendir(path, batchSize);
    },
    rmdir: (path) => {
      check(path);
      return nodeFsOps.rmdir(path);
    },
    unlink: (path) => {
      check(path);
      return nodeFsOps.unlink(path);
    },
    rename: (from, to) => {
      check(from, to);
      return nodeFsOps.rename(from, to);
    },
    link: (from, to) => {
      check(from, to);
      return nodeFsOps.link(from, to);
    },
    symlink: (target, path) => {
      check(path);
      return nodeFsOps.symlink(target, path);
    },
    readlink: (path) => {
      check(path);
      return nodeFsOps.readlink(path);
    },
  };
}

/** Every path below `dir`, relative to it, links not followed. */
async function walk(dir: string, prefix = ''): Promise<{ path: string; isFile: boolean }[]> {
  const entries = await readdir(join(dir, prefix), { withFileTypes: true }).catch(() => []);
  const found: { path: string; isFile: boolean }[] = [];
  for (const entry of entries) {
    const path = join(prefix, entry.name);
    found.push({ path, isFile: entry.isFile() });
    if (entry.isDirectory()) found.push(...(await walk(dir, path)));
  }
  return found;
}

/** The regular files below `dir` that hold the sentinel's secret. */
async function secretsIn(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const { path, isFile } of await walk(dir)) {
    if (isFile && (await readFile(join(dir, path), 'utf8')).includes(secretText)) found.push(path);
  }
  return found;
}

/** Every path below `dir` whose name marks a clone's temporary copy. */
async function temporaryCopies(dir: string): Promise<string[]> {
  return (await walk(dir)).map(({ path }) => path).filter((path) => path.endsWith('.copy'));
}

async function setUp() {
  const root = await temporaryRoot();
  const outside = await realpath(await mkdtemp(join(tmpdir(), 'hostpath-outside-')));
  plantSentinel(outside);
  const source = await boundSource(root.path);
  plantTree(source.dir, outside);
  const store = snapshotStore(snapshotOf('src'));
  const escaped: string[] = [];
  const fs = confinedFs(root.path, escaped);
  const snapshots = {
    snapshots: store.client,
    claims: { get: async () => source.bound },
    volumes: { get: async () => source.pv },
  };
  const scope = { root: root.path, node: undefined, provisionerName: defaultProvisionerName };
  const storage = hostPathSnapshotStorage(new VolumeRoot(root.path, { fs }), scope);
  const taker = new SnapshotTaker({ ...snapshots, storage, provisionerName: defaultProvisionerName });
  const provisioner = new HostPathProvisioner({ mode: 'shared', root: root.path, fs, snapshots });
  const restore = async (restoring: OperationContext, name = 'restored') => {
    const options = provisionOptions(claim({ name }));
    const dataSource = { ...snapshotKind, name: 'snap', namespace: 'team-a' };
    return untilFinished(() => provisioner.provision({ ...options, dataSource }, restoring));
  };
  return {
    root: root.path,
    outside,
    sentinel: await treeSnapshot(outside),
    source,
    store,
    escaped,
    taker,
    restore,
    dataDir: join(root.path, snapshotPath('team-a', 'snap-uid')),
    async [Symbol.asyncDispose]() {
      await root[Symbol.asyncDispose]();
      await rm(outside, { recursive: true, force: true });
    },
  };
}

type Scene = Awaited<ReturnType<typeof setUp>>;

/** Steps of a tenant between writes: enough for each change to land many times, few enough to stay fast. */
const tenantRounds = 300;

/** A context whose fence lets the tenant change `dir` before every write of the copy (its first {@link tenantRounds}). */
function tenantBetweenWrites(scene: Scene, dir: string, firstRound: number) {
  const tenant = { rounds: 0 };
  const between: OperationContext = {
    ...context,
    assertLeader: () => {
      if (tenant.rounds < tenantRounds) tenantStep(dir, scene.outside, firstRound + tenant.rounds++);
    },
  };
  return { tenant, between };
}

/** What holds whatever the tenant did: nothing outside read, written or copied, no temporary copy left. */
async function expectConfined(scene: Scene): Promise<void> {
  expect(scene.escaped).toEqual([]);
  expect(await treeSnapshot(scene.outside)).toEqual(scene.sentinel);
  expect(await secretsIn(scene.dataDir)).toEqual([]);
  expect(await temporaryCopies(scene.root)).toEqual([]);
}

/** The tenant as a process of its own, changing `dir` until stopped. */
async function tenantProcess(dir: string, outside: string) {
  const child = spawn(
    process.execPath,
    [join(import.meta.dirname, 'hostile-tenant-process.ts'), dir, outside],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  // A test failing before `stop` still ends its tenant.
  onTestFinished(() => {
    child.kill();
  });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  expect((await lines.next()).value).toBe('ready');
  return {
    /** Stops the tenant; resolves how many rounds it made. */
    async stop(): Promise<number> {
      child.stdin.end();
      const { value } = await lines.next();
      return Number(/^rounds (\d+)$/.exec(String(value))?.[1]);
    },
  };
}

describe('a hostile tenant during a snapshot', () => {
  it.each([0, 1, 2, 3])(
    'changing its tree before every write (from step %i) gets nothing from outside, and a failed snapshot leaves nothing',
    async (firstRound) => {
      await using scene = await setUp();
      const { tenant, between } = tenantBetweenWrites(scene, scene.source.dir, firstRound);

      await reconcileEach(scene.taker, scene.store, between);

      expect(tenant.rounds).toBeGreaterThan(8);
      await expectConfined(scene);
      const status = scene.store.objects.get('snap')?.status;
      if (status?.readyToUse !== true) {
        expect(status?.error?.message).toEqual(expect.any(String));
        // Only the empty volume the next pass fills stays; deleting the snapshot removes that too.
        expect(await readdir(scene.dataDir)).toEqual([]);
        deleting(scene.store);
        await reconcileEach(scene.taker, scene.store, context);
        expect(scene.store.objects.has('snap')).toBe(false);
        await expect(lstat(scene.dataDir)).rejects.toMatchObject({ code: 'ENOENT' });
      }
    },
  );

  it('racing it from a process of its own gets nothing from outside, and the next pass in quiet copies it exactly', async () => {
    await using scene = await setUp();
    const tenant = await tenantProcess(scene.source.dir, scene.outside);

    await reconcileEach(scene.taker, scene.store, context);

    // It ran before the pass began and stopped only after it ended.
    expect(await tenant.stop()).toBeGreaterThan(8);
    await expectConfined(scene);
    const status = scene.store.objects.get('snap')?.status;
    expect(status?.readyToUse === true || typeof status?.error?.message === 'string').toBe(true);
    if (status?.readyToUse !== true) {
      await reconcileEach(scene.taker, scene.store, context);
      expect(scene.store.objects.get('snap')?.status?.readyToUse).toBe(true);
      expect(await treeSnapshot(scene.dataDir)).toEqual(await treeSnapshot(scene.source.dir));
    }
  });
});

describe('a hostile tenant during a restore', () => {
  // A tenant never reaches the snapshot area; the worst case is assumed anyway: the tree the
  // restore copies is the one changing.
  it.each([0, 1, 2, 3])(
    'changing the copied tree before every write (from step %i) gets nothing from outside, and a failed restore leaves nothing',
    async (firstRound) => {
      await using scene = await setUp();
      await reconcileEach(scene.taker, scene.store, context);
      expect(scene.store.objects.get('snap')?.status?.readyToUse).toBe(true);
      const before = await readdir(scene.root);
      const { tenant, between } = tenantBetweenWrites(scene, scene.dataDir, firstRound);

      const result = await scene.restore(between);

      expect(tenant.rounds).toBeGreaterThan(8);
      await expectConfined(scene);
      if ('error' in result) {
        expect(await readdir(scene.root)).toEqual(before);
      } else {
        const restored = provisioned(result).spec?.hostPath?.path ?? '';
        expect(relative(scene.root, restored)).not.toMatch(/^\.\./);
        expect(await secretsIn(restored)).toEqual([]);
      }
    },
  );

  it('racing it from a process of its own gets nothing from outside, and a restore in quiet is exact', async () => {
    await using scene = await setUp();
    await reconcileEach(scene.taker, scene.store, context);
    const tenant = await tenantProcess(scene.dataDir, scene.outside);

    const raced = await scene.restore(context);

    expect(await tenant.stop()).toBeGreaterThan(8);
    await expectConfined(scene);
    if (!('error' in raced))
      expect(await secretsIn(provisioned(raced).spec?.hostPath?.path ?? '')).toEqual([]);
    const quiet = provisioned(await scene.restore(context, 'quiet'));
    expect(await treeSnapshot(quiet.spec?.hostPath?.path ?? '')).toEqual(await treeSnapshot(scene.dataDir));
  });
});
