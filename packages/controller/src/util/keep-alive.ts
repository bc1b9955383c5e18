/**
 * Holding the process open on purpose. Every timer of the controller is unref'd (a queue's delay, a
 * backoff, a Lease renewal must not decide on their own whether a host process lives), so something
 * that is meant to run until stopped must say so: `ProvisionController.run` holds one handle from
 * start until it settles, whatever else (a metrics server, sockets) happens to be open. Without it,
 * Node exits as soon as the API server is unreachable and nothing is in flight.
 */
import { clearInterval, setInterval } from 'node:timers';

/** The longest delay Node accepts; the callback is never meant to run. */
const maxDelayMs = 2 ** 31 - 1;

/**
 * Keeps the event loop alive until the returned function is called (idempotent). Taken from
 * `node:timers`, so test fake timers that replace the globals cannot swap it for a fake.
 */
export function holdProcessOpen(): () => void {
  const handle = setInterval(() => {}, maxDelayMs);
  return () => clearInterval(handle);
}
