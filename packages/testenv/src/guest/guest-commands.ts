/** The `kube-testenv` subcommands about the test guest: `guest-image` and `guest-exec`. */
import { startGuest } from './guest.ts';
import { ensureGuestImage } from './guest-image.ts';
import { guestUnsupportedReason } from './guest-prerequisites.ts';

type Log = (message: string) => void;

/** `guest-image`: builds the guest's kernel and root image unless cached; prints their directory. */
export async function guestImageCommand(log: Log): Promise<number> {
  const started = Date.now();
  const image = await ensureGuestImage({ onProgress: log });
  log(
    `guest ${image.key}: kernel ${image.kernelRelease}, Node.js ${image.nodeVersion} (${Date.now() - started} ms)`,
  );
  process.stdout.write(`${image.dir}\n`);
  return 0;
}

/**
 * `guest-exec -- <command…>`: boots a guest, runs the command in it as root, prints its output and
 * exits with its status (128 after a signal). For looking around the guest by hand.
 */
export async function guestExecCommand(command: readonly string[], log: Log): Promise<number> {
  if (command.length === 0) {
    log('guest-exec needs a command after --');
    return 2;
  }
  const unsupported = guestUnsupportedReason();
  if (unsupported !== undefined) {
    log(unsupported);
    return 1;
  }
  const guest = await startGuest({ onProgress: log });
  try {
    const result = await guest.run(command, { timeoutMs: 10 * 60_000 });
    process.stdout.write(result.stdout);
    process.stderr.write(result.stderr);
    return result.status ?? 128;
  } finally {
    await guest.stop();
  }
}
