import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { leaderIdentity } from '../src/leader-election/leader-identity.ts';
import { leaseNameFor } from '../src/leader-election/lease-name.ts';

describe('leaseNameFor', () => {
  it('replaces "/" with "-", as the Go library does', () => {
    expect(leaseNameFor('example.com/hostpath')).toBe('example.com-hostpath');
    expect(leaseNameFor('k8s-sigs.io/nfs-subdir-external-provisioner')).toBe(
      'k8s-sigs.io-nfs-subdir-external-provisioner',
    );
  });

  it('leaves a name that is already a valid DNS-1123 subdomain unchanged', () => {
    for (const name of ['cluster.local', 'a', 'a--b.c-d.e', `${'x'.repeat(63)}.${'y'.repeat(63)}`]) {
      expect(leaseNameFor(name)).toBe(name);
    }
  });

  it('sanitises what Go would reject: case, other characters, empty and edge labels, length', () => {
    expect(leaseNameFor('Example.COM/Host_Path')).toBe('example.com-host-path');
    expect(leaseNameFor('-a..b-/')).toBe('a.b');
    expect(leaseNameFor('a.-b-.c')).toBe('a.b.c');
    const long = leaseNameFor(`${'a'.repeat(252)}-b`);
    expect(long).toBe('a'.repeat(252));
  });

  it('rejects a name with nothing usable in it', () => {
    expect(() => leaseNameFor('/./')).toThrow(/cannot derive a Lease name/);
  });
});

describe('leaderIdentity', () => {
  it('is <hostname>_<uuid>, fresh on every call', () => {
    const first = leaderIdentity();
    expect(first).toMatch(new RegExp(`^${hostname().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}_[0-9a-f-]{36}$`));
    expect(leaderIdentity()).not.toBe(first);
  });
});
