// `npm test` starts with scripts/prerequisites.ts: a machine that lacks a system program hears which
// Debian packages to install, and how, before any suite runs.
import { execFile } from 'node:child_process';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

const script = join(import.meta.dirname, '..', '..', '..', 'scripts', 'prerequisites.ts');
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

/** A PATH holding only stand-ins for `programs`. */
async function pathWith(programs: readonly string[]): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'prerequisites-'));
  dirs.push(dir);
  for (const program of programs) {
    await writeFile(join(dir, program), '#!/bin/sh\n');
    await chmod(join(dir, program), 0o755);
  }
  return dir;
}

function check(path: string): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [script, '--check'], { env: { PATH: path } }, (err, _stdout, stderr) => {
      resolve({ code: err === null ? 0 : Number(err.code), stderr });
    });
  });
}

describe('scripts/prerequisites.ts', () => {
  it('lists what is missing with the command that installs it, and exits 1', async () => {
    const { code, stderr } = await check(
      await pathWith(['openssl', 'ganesha.nfsd', 'nfs-ls', 'nfs-cp', 'nfs-cat']),
    );

    expect(code).toBe(1);
    expect(stderr).toContain('Debian package podman, for the image tests');
    expect(stderr).toContain(
      'Install with: sudo apt-get install --no-install-recommends podman runc mmdebstrap',
    );
    expect(stderr).not.toContain('openssl');
  });

  it('passes quietly when everything is there', async () => {
    const all = [
      'openssl',
      'ganesha.nfsd',
      'nfs-ls',
      'nfs-cp',
      'nfs-cat',
      'podman',
      'runc',
      'mmdebstrap',
      'ip',
      'chattr',
      'readelf',
      'qemu-aarch64-static',
      'go',
      'mkfs.xfs',
    ];
    expect(await check(await pathWith(all))).toEqual({ code: 0, stderr: '' });
  });
});
