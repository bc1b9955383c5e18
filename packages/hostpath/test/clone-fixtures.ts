/** Clone sources for the hostpath unit tests: a Bound source claim on a root, and a fake API holding it. */
import type { ProvisionOptions, ProvisionResult } from '@kube-provisioner/controller';
import { ApiError } from '@kube-provisioner/controller/client';
import type { CloneSourceAccess } from '@kube-provisioner/controller/clone';
import type { V1PersistentVolume, V1PersistentVolumeClaim, V1StorageClass } from '@kubernetes/client-node';
import { defaultProvisionerName, HostPathProvisioner } from '../src/hostpath-provisioner.ts';
import type { ProjectQuotaAccess } from '../src/size-enforcement.ts';
import { claim, context, provisioned, provisionOptions, storageClass } from './fixtures.ts';

const notFound = () => new ApiError(404, 'not found', { reason: 'NotFound' });

/** A fake API holding the Bound source claim and its PV, remembering every claim patch. */
export function api(
  source: V1PersistentVolumeClaim,
  pv: V1PersistentVolume,
): { access: CloneSourceAccess; patches: unknown[] } {
  const patches: unknown[] = [];
  const access: CloneSourceAccess = {
    claims: {
      async get(name) {
        if (name !== source.metadata?.name) throw notFound();
        return source;
      },
      async patch(_name, patch) {
        patches.push(patch);
        return source;
      },
    },
    volumes: {
      async get(name) {
        if (name !== pv.metadata?.name) throw notFound();
        return pv;
      },
    },
  };
  return { access, patches };
}

export function hostpath(
  root: string,
  node?: string,
  clones?: CloneSourceAccess,
  projectQuotas?: ProjectQuotaAccess,
): HostPathProvisioner {
  const mode = node === undefined ? 'shared' : 'per-node';
  return new HostPathProvisioner({ mode, root, nodeName: node, clones, projectQuotas });
}

/** Provisions source claim `src` on `root` (on `node` in per-node mode) and returns it Bound. */
export async function boundSource(
  root: string,
  node?: string,
): Promise<{ bound: V1PersistentVolumeClaim; pv: V1PersistentVolume; dir: string }> {
  const pvc = claim({ name: 'src', node });
  const options = provisionOptions(pvc);
  const pv = provisioned(await hostpath(root, node).provision(options, context));
  const bound = { ...pvc, spec: { ...pvc.spec, volumeName: options.pvName }, status: { phase: 'Bound' } };
  const annotations = {
    ...pv.metadata?.annotations,
    'pv.kubernetes.io/provisioned-by': defaultProvisionerName,
  };
  return {
    bound,
    pv: { ...pv, metadata: { ...pv.metadata, annotations } },
    dir: pv.spec?.hostPath?.path ?? '',
  };
}

export function cloneOptions(sc: V1StorageClass = storageClass(), node?: string): ProvisionOptions {
  return {
    ...provisionOptions(claim({ name: 'copy', node }), sc),
    dataSource: { apiGroup: '', kind: 'PersistentVolumeClaim', name: 'src', namespace: 'team-a' },
  };
}

/** Calls `provision` until it stops answering Background. */
export async function untilFinished(call: () => Promise<ProvisionResult>): Promise<ProvisionResult> {
  for (;;) {
    const result = await call();
    if (!('error' in result) || result.state !== 'Background') return result;
    await new Promise((resolve) => setImmediate(resolve));
  }
}
