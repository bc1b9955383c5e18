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

  it('sanitises what Go would reject and tells names that sanitise alike apart by a hash', () => {
    const mixedCase = leaseNameFor('Example.COM/Host_Path');
    expect(mixedCase).toMatch(/^example\.com-host-path-[0-9a-f]{8}$/u);
    expect(leaseNameFor('example.com/host_path')).toMatch(/^example\.com-host-path-[0-9a-f]{8}$/u);
    expect(
      new Set([mixedCase, leaseNameFor('example.com/host_path'), leaseNameFor('example.com/host-path')]).size,
    ).toBe(3);
    expect(leaseNameFor('-a..b-/')).toMatch(/^a\.b-[0-9a-f]{8}$/u);
    expect(leaseNameFor('a.-b-.c')).toMatch(/^a\.b\.c-[0-9a-f]{8}$/u);
    const long = [leaseNameFor(`${'a'.repeat(252)}-b`), leaseNameFor(`${'a'.repeat(252)}-c`)];
    expect(long[0]).not.toBe(long[1]);
    for (const name of long) expect(name).toMatch(/^a{244}-[0-9a-f]{8}$/u);
    expect(leaseNameFor('Example.COM/Host_Path')).toBe(mixedCase);
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
