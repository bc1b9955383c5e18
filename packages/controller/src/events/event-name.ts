/**
 * Event object names: `<involvedObject.name>.<Unix time in nanoseconds, hex>`, as client-go
 * generates them, or a random UUID when that is not a valid DNS subdomain.
 */
import { randomUUID } from 'node:crypto';

const dnsSubdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const nanosPerMilli = 1_000_000n;

/** Whether `name` is a valid DNS-1123 subdomain (the rule for most object names). */
export function isDnsSubdomain(name: string): boolean {
  return name.length <= 253 && dnsSubdomain.test(name);
}

/**
 * Generates event names. The clock has millisecond resolution where Go has nanoseconds, so two events
 * about one object in the same millisecond would collide (and the second would be rejected as
 * AlreadyExists); the namer keeps the nanosecond stamp strictly increasing instead.
 */
export class EventNamer {
  #lastNanos = 0n;

  /** A fresh name for an event about the object named `objectName`, recorded at `atMs`. */
  name(objectName: string, atMs: number): string {
    let nanos = BigInt(Math.trunc(atMs)) * nanosPerMilli;
    if (nanos <= this.#lastNanos) nanos = this.#lastNanos + 1n;
    this.#lastNanos = nanos;
    const name = `${objectName}.${nanos.toString(16)}`;
    return isDnsSubdomain(name) ? name : randomUUID();
  }
}
