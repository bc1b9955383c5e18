/**
 * What a test file's NFS provisioners share, whether they run on the host (`useNfsProvisioners`) or in
 * the guest (`useGuestNfsProvisioners`): the deployment's ServiceAccount, unique names, StorageClasses,
 * the export's listing, and the reaper that stops every provisioner after the file's tests and fails
 * the file when one exited badly or was denied something the deployment's RBAC should grant.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { StorageV1Api } from '@kubernetes/client-node';
import { afterAll } from 'vitest';
import { type DeploymentAccount, deploymentAccount, type TestEnv, uniqueName } from './test-env.ts';

/** Options common to both harnesses. */
export interface NfsHarnessOptions {
  /** A kustomization whose RBAC the provisioners run under (see `deploymentAccount`). */
  readonly deployDir: string;
  /** Prefix of the provisioner and StorageClass names. */
  readonly prefix: string;
  /** Output lines that may mention a denial, because the RBAC deliberately does not grant it. */
  readonly expectedDenials?: RegExp;
}

/** A provisioner the harness stops and checks after the file's tests. */
export interface HarnessDeployment {
  readonly provisionerName: string;
  readonly program: {
    output(): string;
    /** The signal that ended it, where the program can tell (the guest's can). */
    exitSignal?(): string | null;
  };
  /** Stops the provisioner and what it runs on; resolves with its exit code. */
  stop(): Promise<number | null>;
}

/** The shared part of a harness, for its `deploy` to build on. */
export interface NfsHarness<D extends HarnessDeployment> {
  /** The deployment's ServiceAccount, its RBAC applied at the first call. */
  credentials(): Promise<DeploymentAccount>;
  /** A unique provisioner name under the file's prefix. */
  provisionerName(): string;
  /** Hands `deployment` to the reaper; returns it. */
  track(deployment: D): D;
  /** Creates a StorageClass (reclaim policy Delete) for `deployment`; resolves with its name. */
  storageClass(deployment: D, parameters?: Record<string, string>): Promise<string>;
}

/** Sorted entries of `relative` in an export on disk, without the provisioner's dot files; empty if missing. */
export async function exportEntries(exportDir: string, relative = ''): Promise<string[]> {
  const names = await readdir(join(exportDir, relative)).catch(() => []);
  return names.filter((name) => !name.startsWith('.')).sort();
}

/** What a stopped provisioner did wrong: a bad exit, or denials the RBAC should not have caused. */
export function deploymentProblems(
  deployment: HarnessDeployment,
  code: number | null,
  expectedDenials?: RegExp,
): string[] {
  const problems: string[] = [];
  const output = deployment.program.output();
  if (code !== 0) {
    const how =
      code === null
        ? `was ended by ${deployment.program.exitSignal?.() ?? 'a signal or a lost agent connection'}`
        : `exited with ${code}`;
    // The reason first and the last lines of output: a summary shows only an error's beginning.
    const tail = output.trimEnd().split('\n').slice(-40).join('\n');
    problems.push(`${deployment.provisionerName} ${how}; its last lines:\n${tail}`);
  }
  const denied = output
    .split('\n')
    .filter((line) => /forbidden|"statusCode":403/iu.test(line) && !expectedDenials?.test(line));
  problems.push(...denied.map((line) => `${deployment.provisionerName} was denied: ${line}`));
  return problems;
}

/**
 * The shared part of an NFS provisioner harness. Call once per file, outside tests: it registers the
 * `afterAll` hook that stops every tracked deployment and throws what went wrong.
 */
export function useNfsHarness<D extends HarnessDeployment>(
  env: TestEnv,
  options: NfsHarnessOptions,
): NfsHarness<D> {
  const storage = env.kubeConfig.makeApiClient(StorageV1Api);
  const deployments: D[] = [];
  let credentials: Promise<DeploymentAccount> | undefined;

  afterAll(async () => {
    const problems: string[] = [];
    for (const deployment of deployments) {
      problems.push(...deploymentProblems(deployment, await deployment.stop(), options.expectedDenials));
    }
    if (problems.length > 0) throw new Error(problems.join('\n'));
  });

  return {
    credentials() {
      credentials ??= deploymentAccount(env, options.deployDir);
      return credentials;
    },
    provisionerName: () => `e2e.kube-provisioner.io/${uniqueName(options.prefix)}`,
    track(deployment) {
      deployments.push(deployment);
      return deployment;
    },
    async storageClass(deployment, parameters = {}) {
      const name = uniqueName(options.prefix);
      await storage.createStorageClass({
        body: {
          metadata: { name },
          provisioner: deployment.provisionerName,
          parameters,
          reclaimPolicy: 'Delete',
        },
      });
      return name;
    },
  };
}
