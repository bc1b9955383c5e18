/**
 * Where a new volume goes when an installation serves several exports, by default: among the exports
 * its class names (`exports: a,b`; absent, all), the one with the most free bytes that can hold the
 * claim's request, ties to the first name. Free space is one statfs of each mount at placement time.
 * The class's other policies are in placement-policy.ts.
 */
import { InfeasibleError } from '@kube-provisioner/controller';

/** Class parameter naming the exports a class's volumes may be placed on (comma-separated). */
export const exportsParameter = 'exports';

/** The part of `statfs` placement needs; `fs.promises.statfs` fits. */
export type StatFs = (path: string) => Promise<{ bsize: number; blocks: number; bavail: number }>;

/** An export as placement sees it: its name and how many bytes it can still take, or why not known. */
export type ExportSpace =
  | { readonly name: string; readonly freeBytes: number; readonly capacityBytes: number }
  | { readonly name: string; readonly error: string };

/**
 * The exports a class may use: its `exports` parameter, or every export.
 *
 * @throws InfeasibleError for an empty list or a name that is not one of `names`.
 */
export function exportsOfClass(value: string | undefined, names: readonly string[]): readonly string[] {
  if (value === undefined) return names;
  const wanted = [...new Set(value.split(',').map((name) => name.trim()))];
  const unknown = wanted.filter((name) => !names.includes(name));
  if (wanted.includes('') || unknown.length > 0) {
    throw new InfeasibleError(
      `invalid StorageClass parameter "${exportsParameter}" ${JSON.stringify(value)}: ${unknown.length > 0 ? `unknown export${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}` : 'empty name'}; this provisioner serves the exports ${names.join(', ')}`,
    );
  }
  return wanted;
}

/**
 * The free space of the export mounted at `mountRoot`, or why it could not be read: an error, or no
 * answer within `timeoutMs` (see {@link answerWithin}).
 */
export async function exportSpace(
  name: string,
  mountRoot: string,
  statfs: StatFs,
  timeoutMs: number,
): Promise<ExportSpace> {
  try {
    const stats = await answerWithin(statfs(mountRoot), timeoutMs, 'statfs');
    return { name, freeBytes: stats.bavail * stats.bsize, capacityBytes: stats.blocks * stats.bsize };
  } catch (err) {
    return { name, error: (err as Error).message };
  }
}

/**
 * `call`'s answer, or a rejection naming `what` after `timeoutMs`: a server that stopped answering
 * must not hold up the other exports. The call itself cannot be cancelled; it ends when the mount
 * answers.
 */
export async function answerWithin<T>(call: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} gave no answer within ${timeoutMs} ms`)), timeoutMs);
    timer.unref();
  });
  try {
    return await Promise.race([call, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** The exports of `spaces` whose free space is known and can hold `requestBytes`, in name order. */
export function exportsThatFit(
  spaces: readonly ExportSpace[],
  requestBytes: bigint | undefined,
): { readonly name: string; readonly freeBytes: number }[] {
  return spaces
    .flatMap((space) =>
      'freeBytes' in space && BigInt(Math.floor(space.freeBytes)) >= (requestBytes ?? 0n)
        ? [{ name: space.name, freeBytes: space.freeBytes }]
        : [],
    )
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * The error (retried: space may be freed) of a placement no export of `spaces` can take, naming
 * every export and its free space.
 */
export function nothingFits(spaces: readonly ExportSpace[], requestBytes: bigint | undefined): Error {
  const each = [...spaces]
    .sort((a, b) => (a.name < b.name ? -1 : 1))
    .map((space) =>
      'freeBytes' in space
        ? `${space.name} has ${space.freeBytes} bytes free`
        : `${space.name}'s free space is unknown (${space.error})`,
    );
  return new Error(
    `no export of this class can hold the requested ${requestBytes ?? 0n} bytes: ${each.join(', ')}; no directory was created`,
  );
}

/**
 * The name of the export with the most free bytes that can hold `requestBytes` (ties: the first
 * name in sort order). Exports whose space is unknown are left out.
 *
 * @throws Error from {@link nothingFits} when none can hold the request.
 */
export function placeVolume(spaces: readonly ExportSpace[], requestBytes: bigint | undefined): string {
  // A stable sort keeps name order among equals.
  const chosen = exportsThatFit(spaces, requestBytes).sort((a, b) => b.freeBytes - a.freeBytes)[0];
  if (chosen === undefined) throw nothingFits(spaces, requestBytes);
  return chosen.name;
}
