import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';

/**
 * A fresh leader-election identity, `<hostname>_<uuid>`: new on every call, so two processes on one
 * host, or one process restarted, never share an identity.
 */
export function leaderIdentity(): string {
  return `${hostname()}_${randomUUID()}`;
}
