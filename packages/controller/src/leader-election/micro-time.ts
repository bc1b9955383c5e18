/**
 * A Lease time (`metav1.MicroTime`): serialised with microsecond precision, as client-go writes it
 * (`2026-11-27T11:00:00.123000Z`). The same as client-node's `V1MicroTime`, defined here so leader
 * election does not load client-node at run time.
 */
export class MicroTime extends Date {
  override toISOString(): string {
    return `${super.toISOString().slice(0, -1)}000Z`;
  }
}
