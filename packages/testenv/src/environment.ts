import { delimiter } from 'node:path';
import type { ControlPlane } from './control-plane.ts';

/**
 * Variables that point a process at a control plane: `TESTENV_KUBECONFIG` and `TESTENV_DIR` for
 * test helpers, `KUBECONFIG` and a `PATH` led by the built `kubectl` for everything else.
 */
export function testenvEnvironment(
  controlPlane: Pick<ControlPlane, 'kubeconfigPath' | 'dir' | 'binDir'>,
  path: string = process.env.PATH ?? '',
): Record<string, string> {
  return {
    TESTENV_KUBECONFIG: controlPlane.kubeconfigPath,
    TESTENV_DIR: controlPlane.dir,
    KUBECONFIG: controlPlane.kubeconfigPath,
    PATH: path ? `${controlPlane.binDir}${delimiter}${path}` : controlPlane.binDir,
  };
}
