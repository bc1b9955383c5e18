/**
 * The Lease name for a provisioner. Go replaces each `/` with `-` and stops there; whenever that gives
 * a valid DNS-1123 subdomain this port uses exactly the same name, so a cluster moving from the Go
 * library keeps its Lease. Go's name is refused by the API server otherwise; then this port
 * sanitises it (lowercase, other invalid characters to `-`, edge and empty labels trimmed, at most
 * 253 characters) and appends a hash of the full provisioner name, so that two provisioner names that
 * sanitise alike (`Example.com/a` and `example.com/a`, `a_b` and `a-b`) never share one Lease.
 */
import { createHash } from 'node:crypto';

const maxLength = 253;
const hashLength = 8;
const dns1123Subdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/u;

/** The Lease name for `provisionerName`, e.g. `example.com/hostpath` → `example.com-hostpath`. */
export function leaseNameFor(provisionerName: string): string {
  const goName = provisionerName.replaceAll('/', '-');
  if (goName.length <= maxLength && dns1123Subdomain.test(goName)) return goName;
  const sanitize = (text: string): string =>
    text
      .split('.')
      .map((label) => label.replace(/[^a-z0-9-]/g, '-').replace(/^-+|-+$/g, ''))
      .filter((label) => label !== '')
      .join('.');
  const base = sanitize(sanitize(provisionerName.toLowerCase()).slice(0, maxLength - hashLength - 1));
  if (base === '')
    throw new RangeError(`cannot derive a Lease name from provisioner name "${provisionerName}"`);
  const hash = createHash('sha256').update(provisionerName).digest('hex').slice(0, hashLength);
  return `${base}-${hash}`;
}
