/**
 * One walk of `wide-volume.ts`, run in a process of its own (bundled, as the image runs it):
 * `node wide-volume-walk.mjs <walk> <base> <volume>` runs the walk on volume `ns/<volume>` of
 * `<base>` and prints one line of JSON: its wall time, what it did, and this process's RSS before it
 * and at its peak (`VmHWM`).
 */
import { readFileSync } from 'node:fs';
import {
  parseRelativeVolumePath,
  type RelativeVolumePath,
  scanVolumeUsage,
  type VolumeOwner,
  VolumeRoot,
} from '@kube-provisioner/safe-fs';

/** What one walk does; `clone` copies its volume to `<volume>-copy`, `delete-copy` removes that. */
export type Walk = 'usage' | 'clone' | 'delete-copy' | 'delete';

/** The walks, in the order `wide-volume.ts` runs them on each volume. */
export const walks: readonly Walk[] = ['usage', 'clone', 'delete-copy', 'delete'];

/** The owner of bench volume `name` (PV `pv-<name>`). */
export function ownerOf(name: string): VolumeOwner {
  return {
    claimUid: `uid-${name}`,
    namespace: 'ns',
    claimName: name,
    pvName: `pv-${name}`,
    provisioner: 'bench',
  };
}

/** Runs `walk` on volume `ns/<volume>` of `base`; returns what it did. */
async function runWalk(walk: Walk, base: string, volume: string): Promise<string> {
  const path = (name: string): RelativeVolumePath => parseRelativeVolumePath(`ns/${name}`);
  const root = new VolumeRoot(base);
  switch (walk) {
    case 'usage': {
      const usage = await scanVolumeUsage(base, path(volume));
      return `${usage?.inodes} inodes`;
    }
    case 'clone': {
      const copy = `${volume}-copy`;
      const options = { owner: ownerOf(copy), mode: 0o777, sourcePvName: `pv-${volume}` };
      const progress = await root.cloneVolume(path(volume), path(copy), options);
      return `${progress.entries} entries copied`;
    }
    case 'delete-copy':
      return root.deleteVolume(path(`${volume}-copy`), { pvName: `pv-${volume}-copy` });
    case 'delete':
      return root.deleteVolume(path(volume), { pvName: `pv-${volume}` });
  }
}

/** `VmRSS` and `VmHWM` of this process, in MiB. */
function memory(): { readonly rssMib: number; readonly peakRssMib: number } {
  const status = readFileSync('/proc/self/status', 'utf8');
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'mu').exec(status)?.[1] ?? 0);
  return { rssMib: kib('VmRSS') / 1024, peakRssMib: kib('VmHWM') / 1024 };
}

const [walk, base, volume] = process.argv.slice(2);
if (import.meta.main) {
  if (
    !(walks as readonly (string | undefined)[]).includes(walk) ||
    base === undefined ||
    volume === undefined
  ) {
    throw new Error(`usage: wide-volume-walk <${walks.join('|')}> <base> <volume>`);
  }
  const startRssMib = memory().rssMib;
  const start = performance.now();
  const outcome = await runWalk(walk as Walk, base, volume);
  const ms = performance.now() - start;
  process.stdout.write(`${JSON.stringify({ ms, outcome, startRssMib, peakRssMib: memory().peakRssMib })}\n`);
}
