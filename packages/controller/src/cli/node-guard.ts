/**
 * The first thing a provisioner binary runs: on a Node.js older than the packages need, a clear
 * message and exit code 1 instead of a `SyntaxError` from deep inside the module graph. This module
 * imports nothing, so it loads on any Node.js that runs ES modules; a binary imports it statically and
 * everything else dynamically, after the check.
 *
 * Stability: stable (see "Versioning" in the repository README).
 */

/** The oldest Node.js the packages run on (`engines.node`). */
export const minimumNodeVersion = '22.19.0';

/** Whether `version` (`process.versions.node`, e.g. `24.2.0`) is at least {@link minimumNodeVersion}. */
export function isSupportedNodeVersion(version: string): boolean {
  const have = version.split('.').map(Number);
  const need = minimumNodeVersion.split('.').map(Number);
  for (let i = 0; i < need.length; i++) {
    const a = have[i] ?? 0;
    const b = need[i] ?? 0;
    if (a !== b) return a > b;
  }
  return true;
}

/**
 * Returns `true` on a supported Node.js. Otherwise writes why `program` cannot run to stderr, sets exit
 * code 1 and returns `false`: the caller then loads nothing more and the process ends.
 */
export function checkNodeVersion(program: string): boolean {
  if (isSupportedNodeVersion(process.versions.node)) return true;
  process.stderr.write(
    `${program}: needs Node.js >= ${minimumNodeVersion}, but this is Node.js ${process.version}. ` +
      'Run it with Node.js 24 LTS (or the container image).\n',
  );
  process.exitCode = 1;
  return false;
}
