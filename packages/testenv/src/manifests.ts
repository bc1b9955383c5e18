/**
 * Deployment manifests against a real API server: render a kustomization with the built kubectl, and
 * server-side apply the objects (for real, or as a dry run that runs admission and validation but
 * stores nothing).
 */
import {
  ApiException,
  type KubeConfig,
  type KubernetesObject,
  KubernetesObjectApi,
  loadAllYaml,
  PatchStrategy,
} from '@kubernetes/client-node';
import { ensureBinaries } from './binaries.ts';
import { runCommand } from './command.ts';

/**
 * The objects `kubectl kustomize <dir>` renders, with the kubectl of the pinned Kubernetes release
 * (its embedded kustomize), so no separate kustomize is needed.
 */
export async function renderKustomization(dir: string): Promise<KubernetesObject[]> {
  const { kubectl } = await ensureBinaries();
  const yaml = await runCommand(kubectl, ['kustomize', dir]);
  return loadAllYaml(yaml) as KubernetesObject[];
}

/** Options of {@link applyManifests}. */
export interface ApplyManifestsOptions {
  /** Let the API server validate and admit every object without storing it. */
  readonly dryRun?: boolean;
}

/** Identifies an object in messages: `Kind namespace/name`. */
export function describeObject(object: KubernetesObject): string {
  const { namespace, name } = object.metadata ?? {};
  return `${object.kind} ${namespace ? `${namespace}/` : ''}${name ?? '(unnamed)'}`;
}

/**
 * Server-side applies the objects in order (field manager `kube-testenv`, conflicts forced), so
 * applying the same manifests again, e.g. from several test files, converges instead of failing. A
 * dry run of a namespaced object whose namespace the same batch creates would fail, as nothing is
 * stored: the batch's namespaces are applied for real first. Rejects naming the object the API
 * server refused, and why.
 */
export async function applyManifests(
  kubeConfig: KubeConfig,
  objects: readonly KubernetesObject[],
  options: ApplyManifestsOptions = {},
): Promise<void> {
  const client = kubeConfig.makeApiClient(KubernetesObjectApi);
  const apply = async (object: KubernetesObject, dryRun: boolean): Promise<void> => {
    try {
      const dryRunMode = dryRun ? 'All' : undefined;
      await client.patch(object, undefined, dryRunMode, 'kube-testenv', true, PatchStrategy.ServerSideApply);
    } catch (err) {
      const body = err instanceof ApiException ? `: ${String(err.body)}` : '';
      throw new Error(`${describeObject(object)} was refused${body}`, { cause: err });
    }
  };
  const namespaces = options.dryRun ? objects.filter((object) => object.kind === 'Namespace') : [];
  for (const namespace of namespaces) await apply(namespace, false);
  for (const object of objects) {
    if (!namespaces.includes(object)) await apply(object, options.dryRun === true);
  }
}
