/**
 * The Events of an installation serving several exports when one goes down and when it is back. An
 * export is no API object and belongs to several classes, so they are recorded on the provisioner's
 * own Pod (`kubectl describe pod` shows them), once per change, as the log says it.
 */
import type { KubeObject } from '@kube-provisioner/controller/client';

/** Warning Event reason when an export's statfs fails or gives no answer, or it is read-only. */
export const reasonExportUnavailable = 'ExportUnavailable';

/** Normal Event reason when an export that was unavailable answers again, writable. */
export const reasonExportAvailable = 'ExportAvailable';

/**
 * This provisioner's Pod as the downward API names it (`POD_NAME`, `POD_NAMESPACE`), or `undefined`
 * when either is unset: then export changes are only logged.
 */
export function ownPod(env: Readonly<Record<string, string | undefined>>): KubeObject | undefined {
  const name = env.POD_NAME;
  const namespace = env.POD_NAMESPACE;
  if (!name || !namespace) return undefined;
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace } };
}
