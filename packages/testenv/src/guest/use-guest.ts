/**
 * The test guest in vitest files: whether it can run here, and one guest per file, booted on first
 * use and shared by the file's tests (booting takes seconds; tests clean up their own mounts and
 * programs), powered off after them.
 */
import { afterAll } from 'vitest';
import { type Guest, type StartGuestOptions, startGuest } from './guest.ts';
import {
  GuestToolsMissingError,
  guestUnsupportedReason,
  missingGuestPackages,
} from './guest-prerequisites.ts';

/**
 * Whether the test guest can run here, for `describe.skipIf(!guestAvailable())`. Without root or
 * `/dev/net/tun` this is false with a warning saying which, in CI too: no package provides them.
 * A missing Debian package also makes it false with a warning naming it, except with `CI=true`,
 * where the CI script is supposed to have installed it: then it throws
 * a `GuestToolsMissingError` and the file fails.
 */
export function guestAvailable(env: NodeJS.ProcessEnv = process.env): boolean {
  const unsupported = guestUnsupportedReason();
  if (unsupported !== undefined) {
    console.warn(`skipping the tests on a guest kernel: ${unsupported}`);
    return false;
  }
  const missing = missingGuestPackages(env.PATH);
  if (missing.length === 0) return true;
  const error = new GuestToolsMissingError(missing);
  if (env.CI === 'true') throw error;
  console.warn(`skipping the tests on a guest kernel: ${error.message}`);
  return false;
}

/**
 * One guest for the calling test file: the returned function boots it on its first call (later
 * calls get the same guest, or the same boot error) and an `afterAll` hook powers it off. Call once
 * per file, outside tests.
 */
export function useGuest(options: StartGuestOptions = {}): () => Promise<Guest> {
  let booted: Promise<Guest> | undefined;
  afterAll(async () => {
    const guest = await booted?.catch(() => undefined);
    await guest?.stop();
  });
  return () => {
    booted ??= startGuest({
      onProgress: (message) => process.stderr.write(`kube-testenv: ${message}\n`),
      ...options,
    });
    return booted;
  };
}
