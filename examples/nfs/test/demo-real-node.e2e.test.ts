/**
 * `npm run demo` as a newcomer runs it on a machine that can run a real node: its own control plane,
 * the provisioner image as a pod under the example RBAC (kubelet's probes passing), a claim bound,
 * a file written over NFS, the directory archived on delete.
 */
import { nfsToolsAvailable, realNodeAvailable } from '@kube-provisioner/testenv/testing';
import { describe, expect, it } from 'vitest';
import { runDemo } from '../src/demo.ts';

describe.skipIf(!(realNodeAvailable() && nfsToolsAvailable()))('the NFS demo on a real node', () => {
  it('runs the provisioner as a pod, binds a claim, writes through NFS and archives it', async () => {
    const lines: string[] = [];
    const result = await runDemo({ print: (line) => lines.push(line) });

    expect(result.provisionerRanAs).toBe('pod');
    expect(result.viaNfs).toBe(true);
    expect(result.archiveDir).toMatch(/^demo\/archived-data$/u);
    expect(result.archivedContent).toMatch(/^written at .* by the kube-provisioner demo\n$/u);
    const narrative = lines.join('\n');
    expect(narrative).toMatch(/Run the provisioner as a pod on a real node[\s\S]*Running and Ready/u);
    expect(narrative).not.toContain('Start nfs-subdir-provisioner as the image does');
  }, 600_000);
});
