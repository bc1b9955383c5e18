import { describe, expect, it } from 'vitest';
import { goVersionAtLeast, stagingModules, versionLdflags } from '../src/go-wrapper.ts';
import { cacheKey, pinnedVersions, stagingVersion } from '../src/versions.ts';

const kubernetesGoMod = `module k8s.io/kubernetes

go 1.26.0

require (
\tk8s.io/api v0.0.0
\tgithub.com/spf13/cobra v1.10.2
)

replace (
\tk8s.io/api => ./staging/src/k8s.io/api
\tk8s.io/cri-streaming => ./staging/src/k8s.io/cri-streaming
\tk8s.io/sample-apiserver => ./staging/src/k8s.io/sample-apiserver
\tgithub.com/example/fork => github.com/example/fork v1.2.3
)

replace k8s.io/streaming => ./staging/src/k8s.io/streaming
`;

describe('wrapper module for k8s.io/kubernetes', () => {
  it('derives every staging replace, in block and single-line form, and nothing else', () => {
    expect(stagingModules(kubernetesGoMod)).toEqual([
      'k8s.io/api',
      'k8s.io/cri-streaming',
      'k8s.io/sample-apiserver',
      'k8s.io/streaming',
    ]);
  });

  it('maps a Kubernetes release to the staging tag of the same minor and patch', () => {
    expect(stagingVersion('v1.36.3')).toBe('v0.36.3');
    expect(stagingVersion('v1.37.0-rc.1')).toBe('v0.37.0-rc.1');
    expect(() => stagingVersion('v3.6.16')).toThrow(/not a Kubernetes release/);
  });

  it('stamps the release into both version packages', () => {
    const flags = versionLdflags('v1.36.3', '2026-07-22T18:07:38Z');
    for (const pkg of ['k8s.io/component-base/version', 'k8s.io/client-go/pkg/version']) {
      expect(flags).toContain(`-X ${pkg}.gitVersion=v1.36.3`);
      expect(flags).toContain(`-X ${pkg}.gitMajor=1`);
      expect(flags).toContain(`-X ${pkg}.gitMinor=36`);
      expect(flags).toContain(`-X ${pkg}.buildDate=2026-07-22T18:07:38Z`);
      expect(flags).toContain(`-X ${pkg}.gitTreeState=clean`);
    }
  });

  it('compares Go toolchain versions against the wrapper go line', () => {
    expect(goVersionAtLeast('go version go1.26.8 linux/amd64', '1.26.0')).toBe(true);
    expect(goVersionAtLeast('go version go1.26 linux/amd64', '1.26.0')).toBe(true);
    expect(goVersionAtLeast('go version go1.27rc1 linux/amd64', '1.26.0')).toBe(true);
    expect(goVersionAtLeast('go version go1.25.9 linux/amd64', '1.26.0')).toBe(false);
    expect(goVersionAtLeast('garbage', '1.26.0')).toBe(false);
  });

  it('keys the binary cache by both pinned versions', () => {
    expect(cacheKey(pinnedVersions)).toBe(`${pinnedVersions.kubernetes}-etcd-${pinnedVersions.etcd}`);
  });
});
