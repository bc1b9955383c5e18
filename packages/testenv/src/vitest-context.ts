/** What the global setup hands to test files through vitest's `provide` / `inject`. */
export interface TestenvContext {
  /** Admin kubeconfig of the cluster under test. */
  readonly kubeconfigPath: string;
  /** State directory of a kube-testenv control plane; absent for an unrelated existing cluster. */
  readonly dir?: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    kubeTestenv: TestenvContext;
  }
}
