/**
 * Enforced volume sizes: each volume of a class with `enforceSize` is its own quota project, with a
 * project ID unique on the root and block and inode limits from its capacity. The ID is recorded in the
 * volume's ownership record before the directory is made a project, so the records on the root are
 * the truth about which IDs are taken (see `docs/decisions/hostpath.md`, "Project IDs of enforced volumes").
 */
import { readFile, realpath } from 'node:fs/promises';
import { InfeasibleError, type OperationContext } from '@kube-provisioner/controller';
import type { RelativeVolumePath, VolumeRoot } from '@kube-provisioner/safe-fs';
import { type ClassParameters, minAutoInodeLimit } from './class-parameters.ts';
import { checkQuotaMount, type QuotaMount } from './quota-mount.ts';
import { noProjectLimits, type ProjectLimits, type ProjectQuotas, xfsQuota } from './xfs-quota.ts';

/** How the provisioner reaches project quotas: the quota tool and the mount table. */
export interface ProjectQuotaAccess {
  /** The quota tool for a mount. Default: `xfs_quota` ({@link xfsQuota}). */
  readonly tool?: ((mount: QuotaMount) => ProjectQuotas) | undefined;
  /** Reads the text of `/proc/self/mountinfo`; tests inject mounts here. */
  readonly readMountInfo?: (() => Promise<string>) | undefined;
}

// A file with any data takes at least one 4 KiB block, so `auto` binds only what takes no block:
// empty files, short symlinks, special files (see docs/decisions/hostpath.md, "Enforced sizes limit inodes").
const bytesPerAutoInode = 4096;

/**
 * The limits of a volume of `capacityBytes` under the class's graces and inode limit. The inode
 * limit is a hard one only: a soft limit's grace would only delay the same refusal.
 */
export function projectLimits(
  capacityBytes: number,
  parameters: Pick<ClassParameters, 'hardLimitGracePercent' | 'softLimitGracePercent' | 'inodeLimit'>,
): ProjectLimits {
  const above = (percent: number): number => Math.ceil((capacityBytes * (100 + percent)) / 100);
  const soft = parameters.softLimitGracePercent;
  const hardBytes = above(parameters.hardLimitGracePercent);
  const { inodeLimit } = parameters;
  const hardInodes =
    inodeLimit === 'none'
      ? 0
      : inodeLimit === 'auto'
        ? Math.max(minAutoInodeLimit, Math.ceil(hardBytes / bytesPerAutoInode))
        : inodeLimit;
  return { hardBytes, softBytes: soft === undefined ? 0 : above(soft), softInodes: 0, hardInodes };
}

/** Project IDs and quota tools of one root. */
export class SizeEnforcement {
  readonly #root: VolumeRoot;
  readonly #quotas: (mount: QuotaMount) => ProjectQuotas;
  readonly #readMountInfo: () => Promise<string>;
  readonly #soleWriter: boolean;
  /** The allocation in progress: allocations run one at a time, each until its record is written. */
  #allocating: Promise<unknown> = Promise.resolve();
  /** For a sole writer: the highest ID recorded on the root or handed out since, once read. */
  #highestRecorded: number | undefined;

  /**
   * `soleWriter`: this instance alone writes records on the root for as long as it lives (per-node
   * mode), so the records are read once per process for free IDs, not once per create.
   */
  constructor(root: VolumeRoot, options: ProjectQuotaAccess = {}, soleWriter = false) {
    this.#root = root;
    this.#quotas = options.tool ?? xfsQuota;
    this.#readMountInfo = options.readMountInfo ?? (() => readFile('/proc/self/mountinfo', 'utf8'));
    this.#soleWriter = soleWriter;
  }

  /**
   * The quota tool of the root's mount.
   *
   * @throws InfeasibleError naming what the root's file system lacks.
   */
  async quotas(): Promise<ProjectQuotas> {
    const check = checkQuotaMount(await realpath(this.#root.base), await this.#readMountInfo());
    if (!check.enforced)
      throw new InfeasibleError(`parameter "enforceSize" cannot be honoured: ${check.reason}`);
    return this.#quotas(check.mount);
  }

  /**
   * Runs `record(id)` with a project ID no record on the root holds and no project on the mount
   * uses; `record` must write the ID into the volume's record before it resolves. Calls run one at a
   * time, so two creates never see the same free ID; between instances the leadership fence (shared
   * mode) or the one instance per node (per-node mode) keeps them apart.
   */
  withNewProjectId<T>(
    quotas: ProjectQuotas,
    signal: AbortSignal,
    record: (id: number) => Promise<T>,
  ): Promise<T> {
    const run = this.#allocating.then(async () => {
      const id = await this.#freeProjectId(quotas, signal);
      // Handed out even if `record` fails: an ID is never reused, so one skipped is harmless.
      if (this.#highestRecorded !== undefined) this.#highestRecorded = id;
      return record(id);
    });
    this.#allocating = run.catch(() => undefined);
    return run;
  }

  /** Makes volume `relative` (at `path`) a project with `limits`; a retry keeps the ID first recorded. */
  async enforce(
    relative: RelativeVolumePath,
    path: string,
    quotas: ProjectQuotas,
    limits: ProjectLimits,
    context: OperationContext,
  ): Promise<void> {
    const projectId = (await this.#root.readRecord(relative))?.projectId;
    if (projectId === undefined) throw new Error(`the record of ${relative} holds no project ID`);
    await this.limitDirectory({ relative, path, projectId }, quotas, limits, context);
  }

  /**
   * Makes the directory at `target.path` (volume `target.relative`, or the directory that becomes
   * it) the top of project `target.projectId`, with `limits`.
   */
  async limitDirectory(
    target: { readonly relative: RelativeVolumePath; readonly path: string; readonly projectId: number },
    quotas: ProjectQuotas,
    limits: ProjectLimits,
    context: OperationContext,
  ): Promise<void> {
    const { relative, path, projectId } = target;
    context.assertLeader();
    await quotas.assign(path, projectId, context.signal);
    context.assertLeader();
    await quotas.limit(projectId, limits, context.signal);
    context.assertLeader();
    context.logger.info({ path: relative, projectId, limits }, 'volume size enforced');
  }

  /** The bytes project `projectId` uses, as quota accounting holds them (one report of the mount). */
  async projectBytes(projectId: number, signal: AbortSignal): Promise<number> {
    const usage = await (await this.quotas()).report(signal);
    return usage.get(projectId)?.bytes ?? 0;
  }

  /** The project ID recorded on volume `relative` when its record names claim `claimUid`. */
  async recordedProjectId(relative: RelativeVolumePath, claimUid: string): Promise<number | undefined> {
    const record = await this.#root.readRecord(relative);
    return record?.claimUid === claimUid ? record.projectId : undefined;
  }

  /**
   * Sets new limits on volume `relative` of PV `pvName` when it is recorded with a project; a
   * volume without one is left alone.
   *
   * @throws InfeasibleError when the root cannot enforce sizes any more.
   */
  async raiseLimit(
    relative: RelativeVolumePath,
    pvName: string,
    limits: ProjectLimits,
    context: OperationContext,
  ): Promise<void> {
    const projectId = await this.#recordedProject(relative, pvName);
    if (projectId === undefined) return;
    const quotas = await this.quotas();
    context.assertLeader();
    await quotas.limit(projectId, limits, context.signal);
    context.assertLeader();
    context.logger.info({ path: relative, projectId, limits }, 'volume limit raised');
  }

  /**
   * Removes the block and inode limits of volume `relative` of PV `pvName` when it is recorded with a project, and
   * returns that project. Called before its directory goes: a crash in between leaves the record,
   * and the retry removes it again.
   */
  async removeLimit(
    relative: RelativeVolumePath,
    pvName: string,
    context: Pick<OperationContext, 'assertLeader' | 'signal'>,
  ): Promise<number | undefined> {
    // A record that is unreadable or names another PV makes the directory removal refuse, loudly.
    const projectId = await this.#recordedProject(relative, pvName).catch(() => undefined);
    if (projectId === undefined) return undefined;
    const quotas = await this.quotas();
    context.assertLeader();
    await quotas.limit(projectId, noProjectLimits, context.signal);
    return projectId;
  }

  /** The project ID in the record of `relative`, which must name PV `pvName`. */
  async #recordedProject(relative: RelativeVolumePath, pvName: string): Promise<number | undefined> {
    const record = await this.#root.readRecord(relative);
    if (record?.projectId === undefined) return undefined;
    // A forged PV path must not reach another volume's limit.
    if (record.pvName !== pvName) throw new Error(`the record of ${relative} names PV ${record.pvName}`);
    return record.projectId;
  }

  /** One above the highest ID held by a record (live, retained or archived) or used on the mount. */
  async #freeProjectId(quotas: ProjectQuotas, signal: AbortSignal): Promise<number> {
    const [recorded, used] = await Promise.all([this.#highestRecordedId(), quotas.report(signal)]);
    let highest = recorded;
    for (const id of used.keys()) highest = Math.max(highest, id);
    const next = highest + 1;
    if (next > maxProjectId)
      throw new Error('no project ID is left above the highest one in use on the root');
    return next;
  }

  /**
   * The highest project ID in a record on the root: every record read, except by a sole writer
   * after its first call. A shared root's records are read each time: another replica may have
   * led in between, and nothing tells this one that a term began.
   */
  async #highestRecordedId(): Promise<number> {
    if (this.#highestRecorded !== undefined) return this.#highestRecorded;
    const recorded = await this.#root.recordedVolumes((record) => record.projectId !== undefined);
    let highest = 0;
    for (const { record } of recorded) highest = Math.max(highest, record.projectId ?? 0);
    if (this.#soleWriter) this.#highestRecorded = highest;
    return highest;
  }
}

// Project IDs are 32-bit, and 2^32-1 is reserved.
const maxProjectId = 0xffff_fffe;
