import { describe, expect, it } from 'vitest';
import { deploymentProblems, type HarnessDeployment } from '../src/nfs-provisioners-harness.ts';

function deployment(output: string, signal: string | null = null): HarnessDeployment {
  return {
    provisionerName: 'e2e.kube-provisioner.io/p',
    program: { output: () => output, exitSignal: () => signal },
    stop: () => Promise.resolve(0),
  };
}

const leaseDenial = 'W lease: Cannot watch the lease: "statusCode":403';

describe('the NFS provisioner reaper', () => {
  it('finds nothing wrong with a clean exit and only the denials the deployment expects', () => {
    expect(deploymentProblems(deployment(`started\n${leaseDenial}\n`), 0, /Cannot watch the lease/u)).toEqual(
      [],
    );
  });

  it('reports a denial the deployment does not expect, line by line', () => {
    const output = `started\n${leaseDenial}\nE pvs is forbidden: cannot patch\n`;
    expect(deploymentProblems(deployment(output), 0, /Cannot watch the lease/u)).toEqual([
      'e2e.kube-provisioner.io/p was denied: E pvs is forbidden: cannot patch',
    ]);
    expect(deploymentProblems(deployment(output), 0)).toHaveLength(2);
  });

  it('reports a non-zero exit or the signal that ended it, with the last lines of output', () => {
    const [exited] = deploymentProblems(deployment('one\ntwo\n'), 1);
    expect(exited).toBe('e2e.kube-provisioner.io/p exited with 1; its last lines:\none\ntwo');
    const [killed] = deploymentProblems(deployment('bye\n', 'SIGKILL'), null);
    expect(killed).toMatch(/^e2e\.kube-provisioner\.io\/p was ended by SIGKILL; its last lines:\nbye$/u);
  });
});
