/** `npm run demo` against the test cluster: the narrated walk-through must complete and show its evidence. */
import { nfsToolsAvailable, useTestEnv } from '@kube-provisioner/testenv/testing';
import { describe, expect, it } from 'vitest';
import { runDemo } from '../src/demo.ts';

const env = useTestEnv();

describe.skipIf(!nfsToolsAvailable())('the NFS demo', () => {
  it('binds a claim, writes through NFS into the PV, and archives it on delete', async () => {
    const lines: string[] = [];
    const result = await runDemo({ kubeconfigPath: env.kubeconfigPath, print: (line) => lines.push(line) });
    expect(result.viaNfs).toBe(true);
    expect(result.volume.server).toBe('127.0.0.1');
    expect(result.volume.path).toBe(`/export/${result.volumeDir}`);
    expect(result.archiveDir).toMatch(/^demo-[a-z0-9]+\/archived-data$/u);
    expect(result.archivedContent).toMatch(/^written at .* by the kube-provisioner demo\n$/u);
    const narrative = lines.join('\n');
    expect(narrative).toMatch(/1\. Start the NFS server[\s\S]*done in/u);
    expect(narrative).toContain('nfs-cp -> nfs://127.0.0.1/export/');
    expect(narrative).toMatch(/demo finished in \d/u);
  });
});
