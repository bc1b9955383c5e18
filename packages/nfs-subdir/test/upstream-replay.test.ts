/**
 * Replays the upstream matrix (`scripts/upstream-matrix.ts`) on this provisioner and compares what it
 * observes (directory trees and modes, the PV's provisioner-decided fields, what deletion leaves) with
 * upstream's fixtures (`test/fixtures/upstream/<version>.json`, recorded by running upstream's binary
 * with `scripts/record-upstream.ts`). Two phases per case:
 * `replay`, ours provisions and deletes; `takeover`, upstream's provisioned layout and PV (no record,
 * no recorded policy) are deleted by ours, as after an image swap. Every difference must be listed,
 * with its reason, in `test/fixtures/upstream/allowed-differences.json`, and every listed one must
 * still occur.
 */
import { readFileSync } from 'node:fs';
import { chmod, lstat, mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isReservedName } from '@kube-provisioner/safe-fs';
import type { V1PersistentVolume } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import {
  type CaseObservation,
  matrixOf,
  type ObservedEntry,
  observeVolume,
  probeFile,
  pvPlaceholder,
  type UpstreamCase,
  type UpstreamDialect,
  type UpstreamFixture,
} from '../scripts/upstream-matrix.ts';
import {
  claim,
  classReader,
  context,
  nfsProvisioner,
  provisioned,
  provisionOptions,
  released,
  server,
  storageClass,
  temporaryRoot,
} from './fixtures.ts';

type Phase = 'replay' | 'takeover';
type Step = 'pvPath' | 'volume' | 'provisioned' | 'deleted';

/** One listed difference: what ours observes instead of upstream, and why that is accepted. */
interface AllowedDifference {
  readonly upstream: string;
  readonly case: string;
  readonly phase: Phase;
  readonly step: Step;
  readonly ours: string | readonly ObservedEntry[];
  readonly reason: string;
}

const fixtureDir = join(import.meta.dirname, 'fixtures', 'upstream');
const readJson = <T>(name: string): T => JSON.parse(readFileSync(join(fixtureDir, name), 'utf8')) as T;
const fixtures = ['v4.0.2', 'master', 'nfs-client-v3.1.0'].map((version) =>
  readJson<UpstreamFixture>(`${version}.json`),
);
const allowed = readJson<{ differences: AllowedDifference[] }>('allowed-differences.json').differences;

// Records and parent markers (reserved names) are ours alone; they are compared nowhere else.

async function observe(root: string, pvName: string): Promise<ObservedEntry[]> {
  const entries: ObservedEntry[] = [];
  for (const path of await readdir(root, { recursive: true })) {
    if (path.split('/').some(isReservedName)) continue;
    const stats = await lstat(join(root, path));
    entries.push({
      path: path.replaceAll(pvName, pvPlaceholder),
      type: stats.isDirectory() ? 'directory' : 'file',
      mode: `0${(stats.mode & 0o7777).toString(8)}`,
    });
  }
  return entries.sort((a, b) => a.path.localeCompare(b.path));
}

function classOf(c: UpstreamCase) {
  const mountOptions = c.mountOptions === undefined ? {} : { mountOptions: [...c.mountOptions] };
  return storageClass({ ...c.parameters }, { metadata: { name: `nfs-${c.name}` }, ...mountOptions });
}

function claimOf(c: UpstreamCase) {
  return claim({ namespace: c.namespace, name: c.name, labels: c.labels, annotations: c.annotations });
}

async function writeProbe(root: string, relative: string): Promise<void> {
  const file = join(root, relative, probeFile);
  await writeFile(file, 'probe\n');
  await chmod(file, 0o644);
}

/** Ours provisions and deletes the case. */
async function replay(dialect: UpstreamDialect, c: UpstreamCase): Promise<Omit<CaseObservation, 'case'>> {
  await using root = await temporaryRoot();
  const sc = classOf(c);
  const provisioner = nfsProvisioner(dialect, root.path, { classes: classReader(sc) });
  const options = provisionOptions(claimOf(c), sc);
  const pv = provisioned(await provisioner.provision(options, context));
  const relative = (pv.spec?.nfs?.path ?? '').replace(/^\/export\/?/u, '') || '.';
  await writeProbe(root.path, relative);
  const after = await observe(root.path, options.pvName);
  await provisioner.delete(released(pv, sc), context);
  return {
    pvPath: relative.replaceAll(options.pvName, pvPlaceholder),
    volume: observeVolume(pv),
    provisioned: after,
    deleted: await observe(root.path, options.pvName),
  };
}

/** Upstream's provisioned layout and PV, deleted by ours. */
async function takeover(
  dialect: UpstreamDialect,
  c: UpstreamCase,
  upstream: CaseObservation,
): Promise<readonly ObservedEntry[]> {
  await using root = await temporaryRoot();
  const pvName = `pvc-upstream-${c.name}`;
  for (const entry of upstream.provisioned) {
    const path = join(root.path, entry.path.replaceAll(pvPlaceholder, pvName));
    if (entry.type === 'directory') await mkdir(path);
    else await writeFile(path, 'probe\n');
    await chmod(path, Number.parseInt(entry.mode, 8));
  }
  const sc = classOf(c);
  const relative = upstream.pvPath.replaceAll(pvPlaceholder, pvName);
  const pv: V1PersistentVolume = {
    metadata: { name: pvName, annotations: { 'pv.kubernetes.io/provisioned-by': 'upstream' } },
    spec: {
      nfs: { server, path: relative === '.' ? '/export' : `/export/${relative}` },
      storageClassName: sc.metadata?.name ?? '',
      claimRef: { namespace: c.namespace, name: c.name, uid: 'gone' },
    },
    status: { phase: 'Released' },
  };
  await nfsProvisioner(dialect, root.path, { classes: classReader(sc) }).delete(pv, context);
  // Awaited here: `await using` removes the root as the function returns, and a returned promise
  // would still be reading it (a CI run once lost that race: ENOENT on the root).
  return await observe(root.path, pvName);
}

function check(
  upstream: UpstreamFixture,
  c: UpstreamCase,
  phase: Phase,
  step: Step,
  ours: unknown,
  theirs: unknown,
): void {
  const listed = allowed.filter(
    (d) => d.upstream === upstream.upstream && d.case === c.name && d.phase === phase && d.step === step,
  );
  const where = `${upstream.upstream} ${c.name} ${phase} ${step}`;
  if (listed.length === 0) {
    expect(ours, `${where}: unlisted difference from upstream`).toEqual(theirs);
    return;
  }
  expect(theirs, `${where}: listed difference no longer occurs; remove it`).not.toEqual(ours);
  expect(ours, `${where}: differs from the listed difference`).toEqual(listed[0]?.ours);
}

describe.each(fixtures)('upstream $upstream ($source fixtures)', (upstream) => {
  it.each(matrixOf(upstream.dialect))(
    '$name: provisions and deletes as upstream, or as listed',
    async (c) => {
      const theirs = upstream.observations.find((o) => o.case === c.name);
      if (theirs === undefined) throw new Error(`fixture ${upstream.upstream} lacks case ${c.name}`);
      const ours = await replay(upstream.dialect, c);
      check(upstream, c, 'replay', 'pvPath', ours.pvPath, theirs.pvPath);
      // A binary that could not provision (the classic nfs-client today) made no PV to compare.
      if (theirs.provisionFailure === undefined)
        check(upstream, c, 'replay', 'volume', ours.volume, theirs.volume);
      check(upstream, c, 'replay', 'provisioned', ours.provisioned, theirs.provisioned);
      check(upstream, c, 'replay', 'deleted', ours.deleted, theirs.deleted);
      check(upstream, c, 'takeover', 'deleted', await takeover(upstream.dialect, c, theirs), theirs.deleted);
    },
  );
});

it('lists each allowed difference once, with a reason, for a case and fixture that exist', () => {
  const keys = allowed.map((d) => `${d.upstream} ${d.case} ${d.phase} ${d.step}`);
  expect(new Set(keys).size).toBe(keys.length);
  for (const d of allowed) {
    expect(d.reason.length, keys.join()).toBeGreaterThan(20);
    const fixture = fixtures.find((f) => f.upstream === d.upstream);
    expect(fixture, `${d.upstream}: no such fixture`).toBeDefined();
    // A case outside the fixture's matrix is never replayed, so its listing could never fail.
    expect(matrixOf(fixture?.dialect ?? 'nfs-subdir').map((c) => c.name)).toContain(d.case);
  }
});

it('has each fixture recorded by running upstream, over its whole matrix', () => {
  for (const fixture of fixtures) {
    expect(fixture.source, fixture.upstream).toBe('recorded');
    expect(fixture.observations.map((o) => o.case)).toEqual(matrixOf(fixture.dialect).map((c) => c.name));
  }
});
