/**
 * The vitest side of a real node: a test file asks for one with {@link useRealNode}, and gets the
 * node that `kube-testenv exec --node` (or `up --node`) already runs beside the cluster, or else one
 * started for the file and torn down after it.
 */
import { afterAll, beforeAll, inject } from 'vitest';
import { attachControlPlane } from '../control-plane.ts';
import { formatDuration } from '../duration.ts';
import type { TestenvContext } from '../vitest-context.ts';
import { realNodeAptPackages, realNodeUnavailableReason } from './node-preflight.ts';
import { attachRealNode, type RealNode, type StartRealNodeOptions, startRealNode } from './real-node.ts';

/**
 * Whether a real node can run here (root, runc, iproute2, podman, overlayfs, namespaces). Outside CI
 * a missing prerequisite makes this false with one warning naming it, so the caller can
 * `describe.skipIf` and the run reports the tests as skipped. With `CI=true` the CI script is supposed
 * to provide everything, so it throws instead and the file fails.
 */
export function realNodeAvailable(env: NodeJS.ProcessEnv = process.env): boolean {
  const reason = realNodeUnavailableReason();
  if (reason === undefined) return true;
  const message = `${reason} (CI installs: ${realNodeAptPackages.join(' ')}; see packages/testenv/README.md "A real node")`;
  if (env.CI === 'true') throw new Error(message);
  console.warn(`skipping real-node tests: ${message}`);
  return false;
}

/** Options of {@link useRealNode}. */
export interface UseRealNodeOptions extends Omit<StartRealNodeOptions, 'stopOnExit'> {
  /** Images to copy from podman into the node's containerd before the tests (built if podman lacks them is up to the caller). */
  readonly images?: readonly string[];
}

/** A test file's access to the real node, available once its `beforeAll` has run. */
export interface RealNodeAccess {
  /** The node; throws when called before the tests (at collection time). */
  node(): RealNode;
}

/**
 * Registers hooks that provide a real node to this file's tests: the one already running beside the
 * cluster if any, else one started now (its binaries built on first use) and torn down after the
 * file. Call once per file, at the top level, next to `useTestEnv()`; guard the tests with
 * {@link realNodeAvailable}.
 */
export function useRealNode(options: UseRealNodeOptions = {}): RealNodeAccess {
  let node: RealNode | undefined;
  let owned = false;
  beforeAll(async () => {
    const context: TestenvContext = inject('kubeTestenv');
    if (!context?.dir) {
      throw new Error(
        'a real node needs a kube-testenv control plane; TESTENV_DIR is not set for this cluster',
      );
    }
    const report =
      options.onProgress ?? ((message: string) => process.stderr.write(`kube-testenv node: ${message}\n`));
    node = await attachRealNode(context.dir);
    if (!node) {
      const { images: _images, ...startOptions } = options;
      node = await startRealNode(await attachControlPlane(context.dir), {
        ...startOptions,
        onProgress: report,
      });
      owned = true;
    }
    for (const image of options.images ?? []) {
      const started = Date.now();
      await node.loadImage(image);
      report(`${image} in the node's containerd (${formatDuration(Date.now() - started)})`);
    }
  }, 20 * 60_000);
  afterAll(async () => {
    if (owned) await node?.stop();
  }, 120_000);
  return {
    node() {
      if (!node)
        throw new Error('the real node is available in tests and hooks, after useRealNode’s beforeAll');
      return node;
    },
  };
}
