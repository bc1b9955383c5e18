/**
 * Runs the audit CLI the way its read-only guarantee is proved: in a mount namespace where the root is
 * bound read-only (`unshare`), and compares a full `lstat` snapshot of the root before and after.
 */
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { type ProgramCommand, workspaceBinCommand } from '@kube-provisioner/testenv';
import { type ProgramRun, runProgram } from '@kube-provisioner/testenv/testing';

const packageDir = join(import.meta.dirname, '..');

/** The `kube-provisioner-audit` bin from source. */
export const auditCommand: ProgramCommand = workspaceBinCommand(packageDir, 'kube-provisioner-audit');

// Binds the root onto itself read-only in a private mount namespace, then runs the program there.
const readOnlyScript = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"';

/** Runs the audit with `args` while `root` is mounted read-only for it. */
export function runAuditReadOnly(root: string, args: readonly string[]): ProgramRun {
  return runProgram(
    {
      command: 'unshare',
      args: ['--user', '--map-root-user', '--mount', 'sh', '-c', readOnlyScript, 'sh', root],
    },
    [auditCommand.command, ...auditCommand.args, ...args],
    {},
    60_000,
  );
}

/** Every entry under `dir` with the fields any write would change (inode, mode, size, times). */
export async function snapshotTree(dir: string): Promise<Map<string, string>> {
  const snapshot = new Map<string, string>();
  const visit = async (path: string): Promise<void> => {
    const stats = await lstat(path);
    snapshot.set(
      path,
      [stats.ino, stats.mode, stats.size, stats.mtimeMs, stats.ctimeMs, stats.nlink].join(':'),
    );
    if (!stats.isDirectory()) return;
    for (const name of await readdir(path)) await visit(join(path, name));
  };
  await visit(dir);
  return snapshot;
}
