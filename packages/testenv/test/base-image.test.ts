import { describe, expect, it } from 'vitest';
import { baseImageContents, baseImageKey, defaultImagesCacheDir } from '../src/images/base-image.ts';
import { formatImageSize } from '../src/images/podman.ts';

describe('the local base image', () => {
  it('is cached next to the testenv binaries, under a key naming everything in it', () => {
    expect(defaultImagesCacheDir({ XDG_CACHE_HOME: '/cache' })).toBe('/cache/kube-provisioner/images');
    expect(defaultImagesCacheDir({ HOME: '/home/me' })).toBe('/home/me/.cache/kube-provisioner/images');
    expect(baseImageKey()).toBe(
      `node-${baseImageContents.node}-npm-${baseImageContents.npm}-${baseImageContents.suite}`,
    );
    expect(baseImageKey({ ...baseImageContents, node: '24.99.0' })).not.toBe(baseImageKey());
  });

  it('reports sizes in decimal megabytes, as podman does', () => {
    expect(formatImageSize(406_123_456)).toBe('406 MB');
    expect(formatImageSize(2_237_359)).toBe('2.2 MB');
  });
});
