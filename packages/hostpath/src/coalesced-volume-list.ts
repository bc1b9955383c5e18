/**
 * One PV list for the roots of a node read at once: a publication reads every root's capacity, each
 * listing the PVs, and the same page asked for while it is on its way is answered by that request.
 */
import type { VolumeLister } from '@kube-provisioner/controller/usage';

/**
 * `lister`, with a list call made while an identical one (same options but the signal) is in flight
 * answered by that one. Calls with a `transform` are not shared: a function does not compare.
 * The shared call runs under the first caller's signal; the roots of a node are read under one.
 */
export function coalescedVolumeList(lister: VolumeLister): VolumeLister {
  const inFlight = new Map<string, ReturnType<VolumeLister['list']>>();
  return {
    list(options) {
      if (options?.transform !== undefined) return lister.list(options);
      const { signal: _signal, ...compared } = options ?? {};
      const key = JSON.stringify(compared);
      const running = inFlight.get(key);
      if (running !== undefined) return running;
      const call = lister.list(options).finally(() => inFlight.delete(key));
      inFlight.set(key, call);
      return call;
    },
  };
}
