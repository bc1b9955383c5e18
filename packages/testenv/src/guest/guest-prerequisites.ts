/**
 * What the test guest needs from the host: things no package installs (root, `/dev/net/tun`, an
 * x86-64 Linux host) and the Debian packages of the programs it runs (the guest's own packages come
 * from the image build).
 */
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/** Host programs of the guest and the Debian packages that provide them. */
const programs: Readonly<Record<string, string>> = {
  unshare: 'util-linux',
  nsenter: 'util-linux',
  ip: 'iproute2',
  mke2fs: 'e2fsprogs',
  mmdebstrap: 'mmdebstrap',
  'apt-get': 'apt',
  'dpkg-deb': 'dpkg',
  gcc: 'gcc',
};

/** The Debian packages the guest needs on the host. */
export const guestAptPackages: readonly string[] = [...new Set(Object.values(programs))];

function onPath(program: string, path: string): boolean {
  return path.split(delimiter).some((dir) => dir !== '' && existsSync(join(dir, program)));
}

/**
 * Why this host cannot run the guest whatever is installed, or `undefined` when it can: the guest
 * needs root (a network namespace and a tap device) and `/dev/net/tun`.
 */
export function guestUnsupportedReason(): string | undefined {
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    return `the test guest (User-Mode Linux, x86-64) cannot run on ${process.platform}/${process.arch}`;
  }
  if (process.getuid?.() !== 0) {
    return 'the test guest needs root: it makes a network namespace with a tap device';
  }
  if (!existsSync('/dev/net/tun')) {
    return 'the test guest needs /dev/net/tun for its tap device (modprobe tun, or pass the device into the container)';
  }
  return undefined;
}

/** The packages of {@link guestAptPackages} whose programs are missing; empty when all are there. */
export function missingGuestPackages(path: string = process.env.PATH ?? ''): string[] {
  const missing = Object.entries(programs)
    .filter(([program]) => !onPath(program, path))
    .map(([, debianPackage]) => debianPackage);
  return [...new Set(missing)];
}

/** A Debian package the guest needs is not installed. */
export class GuestToolsMissingError extends Error {
  override readonly name = 'GuestToolsMissingError';
  /** The missing Debian packages. */
  readonly packages: readonly string[];

  constructor(packages: readonly string[]) {
    super(
      `the test guest needs the Debian packages ${packages.join(', ')}: apt-get install -y ${packages.join(' ')}`,
    );
    this.packages = packages;
  }
}
