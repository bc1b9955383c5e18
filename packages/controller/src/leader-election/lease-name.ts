/**
 * The Lease name for a provisioner. Go replaces each `/` with `-` and stops there, which fails for
 * names that are not valid DNS-1123 subdomains; this port also lowercases, replaces other invalid
 * characters with `-` and trims each dot-separated label, which leaves every name Go accepts unchanged,
 * so a cluster moving from the Go library keeps its Lease.
 */
const maxLength = 253;

/** The Lease name for `provisionerName`, e.g. `example.com/hostpath` → `example.com-hostpath`. */
export function leaseNameFor(provisionerName: string): string {
  const sanitize = (text: string): string =>
    text
      .split('.')
      .map((label) => label.replace(/[^a-z0-9-]/g, '-').replace(/^-+|-+$/g, ''))
      .filter((label) => label !== '')
      .join('.');
  let name = sanitize(provisionerName.toLowerCase());
  if (name.length > maxLength) name = sanitize(name.slice(0, maxLength));
  if (name === '')
    throw new RangeError(`cannot derive a Lease name from provisioner name "${provisionerName}"`);
  return name;
}
