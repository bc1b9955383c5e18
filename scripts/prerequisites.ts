/**
 * The system programs `npm test` needs beyond Node.js, checked before anything runs. As root on a
 * machine with `apt-get`, the missing Debian packages are installed (what `.ci/run` relies on);
 * otherwise one message lists them with the exact command, and the script exits 1, so no suite fails
 * halfway for a missing tool. Go is checked only while the control plane's binaries are not cached.
 *
 * `node scripts/prerequisites.ts [--check]`: `--check` never installs.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { defaultCacheRoot } from '../packages/testenv/src/binaries.ts';
import { missingNfsPackages, nfsAptPackages } from '../packages/testenv/src/nfs-tools.ts';
import { cacheKey, pinnedVersions } from '../packages/testenv/src/versions.ts';

/** A Debian package some tests need, how to tell it is there, and what for. */
interface Requirement {
  readonly debianPackage: string;
  readonly present: () => boolean;
  readonly neededFor: string;
}

function onPath(program: string): boolean {
  return (process.env.PATH ?? '')
    .split(delimiter)
    .some((dir) => dir !== '' && existsSync(join(dir, program)));
}

const program = (name: string, debianPackage: string, neededFor: string): Requirement => ({
  debianPackage,
  present: () => onPath(name),
  neededFor,
});

const requirements: readonly Requirement[] = [
  program('openssl', 'openssl', "the control plane's certificates"),
  ...nfsAptPackages.map((debianPackage) => ({
    debianPackage,
    present: () => !missingNfsPackages().includes(debianPackage),
    neededFor: "the NFS tests' server and client tools, the chaos suite and the demo",
  })),
  program('podman', 'podman', 'the image tests'),
  program('runc', 'runc', 'the image tests (podman --runtime runc)'),
  program('mmdebstrap', 'mmdebstrap', "the images' local base and the test guest's root image"),
  // The test guest (packages/testenv/src/guest) also needs ip, below, for its private network.
  // The real node (packages/testenv/src/node): runc runs its containers, ip makes its bridges, and
  // chattr makes the NFS chart test's export immutable (readiness must fail while it is).
  program('ip', 'iproute2', "the real node's bridges"),
  program('chattr', 'e2fsprogs', "the real-node NFS chart test's unwritable export"),
  // safe-fs's reflink tests copy on an XFS file system made on a loop device (reflink=1).
  program('mkfs.xfs', 'xfsprogs', "safe-fs's reflink tests (an XFS loop file system)"),
  // The arm64 images: built from arm64 packages (readelf lists what node links), run under emulation.
  program('readelf', 'binutils', "the arm64 images' runtime (the libraries node links)"),
  ...(process.arch === 'arm64'
    ? []
    : [program('qemu-aarch64-static', 'qemu-user-static', 'the arm64 image tests (emulation)')]),
];

/** Whether dpkg lists arm64, whose packages the arm64 images are assembled from (moot elsewhere). */
function arm64PackagesKnown(): boolean {
  if (process.arch === 'arm64' || !onPath('dpkg')) return true;
  return execFileSync('dpkg', ['--print-foreign-architectures'], { encoding: 'utf8' })
    .split('\n')
    .includes('arm64');
}

function goProblem(): string | undefined {
  const cached = existsSync(join(defaultCacheRoot(), cacheKey(pinnedVersions), 'bin'));
  if (cached || onPath('go')) return undefined;
  return `Go >= ${pinnedVersions.go} on PATH (https://go.dev/dl): the control plane is built from the Go module proxy on the first run`;
}

const isRoot = process.getuid?.() === 0;
const mayInstall = !process.argv.includes('--check') && isRoot && onPath('apt-get');
const missing = () => requirements.filter((requirement) => !requirement.present());
const toInstall = missing().map((requirement) => requirement.debianPackage);

if ((toInstall.length > 0 || !arm64PackagesKnown()) && mayInstall) {
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  if (!arm64PackagesKnown()) {
    console.error('prerequisites: dpkg --add-architecture arm64');
    execFileSync('dpkg', ['--add-architecture', 'arm64'], { stdio: 'inherit' });
  }
  execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
  if (toInstall.length > 0) {
    console.error(`prerequisites: installing ${toInstall.join(' ')}`);
    execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...toInstall], {
      stdio: 'inherit',
      env,
    });
  }
}
const stillMissing = missing();
const go = goProblem();
const arm64Packages = arm64PackagesKnown();
if (stillMissing.length > 0 || go !== undefined || !arm64Packages) {
  const lines = ['npm test needs what this machine lacks:'];
  if (!arm64Packages) {
    lines.push(
      "  dpkg's arm64 architecture, for the arm64 images' packages: sudo dpkg --add-architecture arm64 && sudo apt-get update",
    );
  }
  for (const requirement of stillMissing) {
    lines.push(`  Debian package ${requirement.debianPackage}, for ${requirement.neededFor}`);
  }
  if (go !== undefined) lines.push(`  ${go}`);
  if (stillMissing.length > 0) {
    lines.push(
      '',
      `Install with: sudo apt-get install --no-install-recommends ${stillMissing.map((r) => r.debianPackage).join(' ')}`,
      '(npm test run as root installs them itself), then run npm test again.',
    );
  }
  console.error(lines.join('\n'));
  process.exit(1);
}
