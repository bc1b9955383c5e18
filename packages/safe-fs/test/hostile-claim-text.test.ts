import { hostileClaimText, hostilePathPattern } from '@kube-provisioner/safe-fs/testing';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

describe('hostile claim text (testing subpath)', () => {
  it('produces traversal fragments and over-long names, not just plain text', () => {
    const samples = fc.sample(hostileClaimText, { numRuns: 2000, seed: 1 });
    expect(samples.some((text) => text.includes('..'))).toBe(true);
    expect(samples.some((text) => text.includes('/'))).toBe(true);
    expect(samples.some((text) => text.length >= 240)).toBe(true);
  });

  it('produces patterns that use claim placeholders and dot segments', () => {
    const samples = fc.sample(hostilePathPattern, { numRuns: 500, seed: 1 });
    expect(samples.some((pattern) => pattern.includes('.PVC.annotations.path}'))).toBe(true);
    expect(samples.some((pattern) => pattern.includes('..'))).toBe(true);
  });
});
