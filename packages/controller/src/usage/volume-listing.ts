/**
 * The PVs an instance reports the usage of, read page by page from the API server's watch cache
 * (`resourceVersion=0`): a cheap read, however often maintenance runs. Which PVs are its own (made
 * by this provisioner, under its root, on its node…) is the provisioner's: `select`.
 */
import type { V1PersistentVolume } from '@kubernetes/client-node';
import type { ResourceClient } from '../client/resource-client.ts';
import type { OperationContext } from '../provisioner.ts';
import type { MeasuredVolume } from './usage-monitor.ts';

/** Lists PVs (`persistentvolumes` `list`, which the controller's role already grants). */
export type VolumeLister = Pick<ResourceClient<V1PersistentVolume>, 'list'>;

/** Every PV for which `select` answers a volume, in list order. */
export async function listMeasuredVolumes<V extends MeasuredVolume>(
  lister: VolumeLister,
  select: (pv: Readonly<V1PersistentVolume>) => V | undefined,
  context: Pick<OperationContext, 'signal'>,
): Promise<V[]> {
  const volumes: V[] = [];
  let next: string | undefined;
  do {
    const page = await lister.list({
      signal: context.signal,
      limit: 500,
      ...(next === undefined ? { resourceVersion: '0' } : { continue: next }),
    });
    for (const pv of page.items) {
      const volume = select(pv);
      if (volume !== undefined) volumes.push(volume);
    }
    next = page.metadata.continue || undefined;
  } while (next !== undefined);
  return volumes;
}

/** The labels and request every selection shares: the PV's name, its claim, its capacity in bytes. */
export function measuredVolumeOf(
  pv: Readonly<V1PersistentVolume>,
  requestedBytes: number | undefined,
): MeasuredVolume | undefined {
  const claim = pv.spec?.claimRef;
  if (claim?.name === undefined) return undefined;
  return {
    pvName: pv.metadata?.name ?? '',
    namespace: claim.namespace ?? '',
    claimName: claim.name,
    claimUid: claim.uid,
    requestedBytes,
  };
}
