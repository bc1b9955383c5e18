/**
 * Running the arm64 images on an x86-64 machine: Debian's `qemu-user-static` registered with the
 * kernel's `binfmt_misc`, so an aarch64 executable (in a container too: the rule's `F` flag opens the
 * interpreter at registration) runs under emulation. Building the images needs none of it: no step of
 * an arm64 build executes arm64 code.
 */
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { runCommand } from '../command.ts';

const binfmtDir = '/proc/sys/fs/binfmt_misc';
/** The rule file `qemu-user-static` installs; `binfmt-support` or systemd would register it at boot. */
const aarch64Rule = '/usr/lib/binfmt.d/qemu-aarch64.conf';

/** Why arm64 executables cannot run here, or `undefined` when they can (or can once registered). */
export function arm64EmulationUnavailableReason(): string | undefined {
  if (process.arch === 'arm64') return undefined;
  if (!existsSync(aarch64Rule)) {
    return 'arm64 emulation needs qemu-user-static (apt-get install qemu-user-static)';
  }
  if (process.getuid?.() !== 0 && !existsSync(`${binfmtDir}/qemu-aarch64`)) {
    return `arm64 emulation is not registered in ${binfmtDir} and registering it needs root`;
  }
  return undefined;
}

/**
 * Registers qemu's aarch64 rule with `binfmt_misc` (mounting it first) unless it is registered;
 * rejects with {@link arm64EmulationUnavailableReason}'s reason when it cannot be.
 */
export async function ensureArm64Emulation(): Promise<void> {
  const reason = arm64EmulationUnavailableReason();
  if (reason !== undefined) throw new Error(reason);
  if (process.arch === 'arm64') return;
  const entry = `${binfmtDir}/qemu-aarch64`;
  if (existsSync(entry)) {
    if (!(await readFile(entry, 'utf8')).startsWith('enabled')) await writeFile(entry, '1');
    return;
  }
  if (!existsSync(`${binfmtDir}/register`)) {
    await runCommand('mount', ['-t', 'binfmt_misc', 'binfmt_misc', binfmtDir]);
  }
  await writeFile(`${binfmtDir}/register`, await readFile(aarch64Rule, 'utf8'));
}

/**
 * Whether the arm64 image tests can run here: `true`, or one line saying why not and `false`; with
 * `CI=true`, where the machine must run every test, it throws instead.
 */
export function arm64EmulationAvailable(env: NodeJS.ProcessEnv = process.env): boolean {
  const reason = arm64EmulationUnavailableReason();
  if (reason === undefined) return true;
  if (env.CI === 'true') throw new Error(reason);
  console.warn(`skipping the arm64 image tests: ${reason}`);
  return false;
}
