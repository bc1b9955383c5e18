import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  snapshotCopiesInProgress,
  snapshotCopyName,
  snapshotDataDir,
  snapshotLeftovers,
  unexpectedSnapshotEntries,
} from '../src/snapshot-area.ts';

const roots: string[] = [];
afterEach(async () => {
  await Promise.all(roots.splice(0).map((root) => rm(root, { recursive: true, force: true })));
});

async function rootWith(namespace: string, names: readonly string[]): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'chaos-snapshot-area-'));
  roots.push(root);
  const dir = join(root, '.kube-provisioner-snapshots', namespace);
  await mkdir(dir, { recursive: true });
  for (const name of names)
    if (name.endsWith('.json')) await writeFile(join(dir, name), '{}');
    else await mkdir(join(dir, name));
  return root;
}

describe('snapshot area', () => {
  it('expects only the finished snapshots, their records and the parent marker', () => {
    const names = [
      '.kube-provisioner-parent.json',
      'u1',
      '.u1.kube-provisioner.json',
      'u2',
      '.u2.kube-provisioner.json',
    ];
    expect(unexpectedSnapshotEntries(names, ['u1', 'u2'])).toEqual([]);
  });

  it('reports copies, temporary records and the data of snapshots that should be gone', () => {
    const names = [
      'u1',
      '.u1.kube-provisioner.json',
      '.u1.kube-provisioner.copy',
      '.kube-provisioner.tmp.w1.abc',
      'u2',
      '.u2.kube-provisioner.json',
    ];
    expect(unexpectedSnapshotEntries(names, ['u1'])).toEqual([
      '.kube-provisioner.tmp.w1.abc',
      '.u1.kube-provisioner.copy',
      '.u2.kube-provisioner.json',
      'u2',
    ]);
  });

  it('sees a copy in progress on disk, and nothing in a namespace without snapshots', async () => {
    const root = await rootWith('team-a', ['u1', '.u1.kube-provisioner.json', '.u1.kube-provisioner.copy']);
    expect(await snapshotCopiesInProgress(root, 'team-a')).toEqual([snapshotCopyName('u1')]);
    expect(await snapshotCopiesInProgress(root, 'team-b')).toEqual([]);
    expect(await snapshotLeftovers(root, 'team-a', ['u1'])).toEqual(['.u1.kube-provisioner.copy']);
    expect(await snapshotLeftovers(root, 'team-b', [])).toEqual([]);
    expect(snapshotDataDir(root, 'team-a', 'u1')).toBe(join(root, '.kube-provisioner-snapshots/team-a/u1'));
  });
});
