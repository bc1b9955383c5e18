/**
 * Memory and CPU of a process from Linux procfs: `/proc/<pid>/status` (VmRSS, VmHWM, RssFile),
 * `/proc/<pid>/stat` (utime, stime) and `/proc/<pid>/smaps` (resident memory by mapping). Reading procfs measures the child from outside, so the
 * measurement adds nothing to the process measured.
 */
import { readFile } from 'node:fs/promises';

/** One reading of a process. Memory in MiB, CPU in seconds (user + system). */
export interface ProcessSample {
  /** Resident set size now. */
  readonly rssMb: number;
  /** Peak resident set size since the process started (VmHWM). */
  readonly peakRssMb: number;
  /**
   * The file-backed part of `rssMb` (RssFile): the pages of the executable and shared libraries the
   * process has touched, which the kernel may drop under memory pressure. The rest (RssAnon and
   * RssShmem) is heaps, stacks and shared memory.
   */
  readonly rssFileMb: number;
  readonly cpuS: number;
  /** The part of `cpuS` spent in the kernel on the process's behalf (stime): system calls, page faults. */
  readonly cpuSystemS: number;
}

/**
 * Clock ticks per second of utime/stime. USER_HZ is 100 on every Linux architecture Node supports;
 * reading it would need `getconf`, a subprocess per sample.
 */
const clockTicksPerSecond = 100;
const kibPerMib = 1024;

/** The memory figures of `/proc/<pid>/status`, in MiB. */
export interface StatusMemory extends Pick<ProcessSample, 'rssMb' | 'peakRssMb' | 'rssFileMb'> {
  /** The anonymous part of `rssMb` (RssAnon): heaps and stacks. */
  readonly rssAnonMb: number;
}

/** RSS, peak RSS, and the file-backed and anonymous parts of RSS in MiB from the text of `/proc/<pid>/status`. */
export function parseStatus(text: string): StatusMemory {
  const kib = (field: string): number => {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(text);
    if (match === null) throw new Error(`/proc status has no ${field} line`);
    return Number(match[1]);
  };
  return {
    rssMb: kib('VmRSS') / kibPerMib,
    peakRssMb: kib('VmHWM') / kibPerMib,
    rssFileMb: kib('RssFile') / kibPerMib,
    rssAnonMb: kib('RssAnon') / kibPerMib,
  };
}

/** User and system CPU seconds from the text of `/proc/<pid>/stat`. */
export function parseCpuTimes(text: string): { readonly userS: number; readonly systemS: number } {
  // The command name (field 2) is in parentheses and may itself contain spaces and parentheses,
  // so fields are counted from the last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // utime and stime are fields 14 and 15 of the line, 11 and 12 after the state (field 3).
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) throw new Error('malformed /proc stat line');
  return { userS: utime / clockTicksPerSecond, systemS: stime / clockTicksPerSecond };
}

/**
 * User and system CPU seconds of the children the process has waited for (cutime, cstime: fields 16
 * and 17) from the text of `/proc/<pid>/stat`: the tools it runs, such as `xfs_quota`.
 */
export function parseChildCpuTimes(text: string): { readonly userS: number; readonly systemS: number } {
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const cutime = Number(fields[13]);
  const cstime = Number(fields[14]);
  if (!Number.isFinite(cutime) || !Number.isFinite(cstime)) throw new Error('malformed /proc stat line');
  return { userS: cutime / clockTicksPerSecond, systemS: cstime / clockTicksPerSecond };
}

/** User + system CPU seconds from the text of `/proc/<pid>/stat`. */
export function parseCpuSeconds(text: string): number {
  const { userS, systemS } = parseCpuTimes(text);
  return userS + systemS;
}

/** Reads RSS, peak RSS, file-backed RSS and CPU time (and its system part) of a running process. */
export async function sampleProcess(pid: number): Promise<ProcessSample> {
  const [status, stat] = await Promise.all([
    readFile(`/proc/${pid}/status`, 'utf8'),
    readFile(`/proc/${pid}/stat`, 'utf8'),
  ]);
  const { userS, systemS } = parseCpuTimes(stat);
  const { rssMb, peakRssMb, rssFileMb } = parseStatus(status);
  return { rssMb, peakRssMb, rssFileMb, cpuS: userS + systemS, cpuSystemS: systemS };
}

/** Resident KiB per mapping name (`[anon]` for unnamed mappings) from the text of `/proc/<pid>/smaps`. */
export function residentByMapping(smaps: string): Map<string, number> {
  const resident = new Map<string, number>();
  let mapping = '[anon]';
  for (const line of smaps.split('\n')) {
    const header = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (header !== null) {
      mapping = header[1] || '[anon]';
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB$/.exec(line);
    if (rss !== null) resident.set(mapping, (resident.get(mapping) ?? 0) + Number(rss[1]));
  }
  return resident;
}
