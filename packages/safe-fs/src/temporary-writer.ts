/**
 * Which process wrote a temporary record file, so a sweep can tell "its writer is dead" (remove it
 * at once) from "its writer may still have it open" (leave it until it is old). Temporary names
 * carry the writer's tag: boot, PID namespace, PID and start time. Another host, another PID
 * namespace or an unreadable `/proc` leave only the age rule.
 */

import { readFileSync, readlinkSync } from 'node:fs';

/** The parts of a writer tag. */
interface Writer {
  readonly boot: string;
  readonly pidNamespace: string;
  readonly pid: number;
  readonly startTime: string;
}

// The start time (clock ticks after boot) of process `pid`: field 22 of /proc/<pid>/stat, counted
// after the command name, which is parenthesised and may itself contain spaces.
function startTimeOf(pid: number | 'self'): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

function readSelf(): Writer | undefined {
  try {
    const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim().replaceAll('-', '');
    const pidNamespace = /\[(\d+)\]/u.exec(readlinkSync('/proc/self/ns/pid'))?.[1];
    const startTime = startTimeOf('self');
    if (pidNamespace === undefined || startTime === undefined || !/^\d+$/u.test(startTime)) return undefined;
    return { boot, pidNamespace, pid: process.pid, startTime };
  } catch {
    return undefined;
  }
}

let self: Writer | null | undefined;

function ownWriter(): Writer | undefined {
  if (self === undefined) self = readSelf() ?? null;
  return self ?? undefined;
}

/** This process's tag for temporary names (`unknown` when `/proc` does not say). */
export function writerTag(): string {
  const writer = ownWriter();
  if (writer === undefined) return 'unknown';
  return `${writer.boot}-${writer.pidNamespace}-${writer.pid}-${writer.startTime}`;
}

function parseTag(tag: string): Writer | undefined {
  const match = /^([0-9a-f]+)-(\d+)-(\d+)-(\d+)$/u.exec(tag);
  if (match === null) return undefined;
  const [, boot = '', pidNamespace = '', pid = '', startTime = ''] = match;
  return { boot, pidNamespace, pid: Number(pid), startTime };
}

/**
 * - `self`: written by this very process.
 * - `alive`: its writer runs on this host, in this PID namespace.
 * - `dead`: its writer ran here and is gone (its PID is free or reused by a later process).
 * - `unknown`: written elsewhere, or no tag: only its age can tell.
 */
export type WriterState = 'self' | 'alive' | 'dead' | 'unknown';

/** The state of the process that wrote a temporary name tagged `tag`. */
export function writerState(tag: string): WriterState {
  const own = ownWriter();
  const writer = parseTag(tag);
  if (own === undefined || writer === undefined) return 'unknown';
  if (writer.boot !== own.boot || writer.pidNamespace !== own.pidNamespace) return 'unknown';
  if (writer.pid === own.pid && writer.startTime === own.startTime) return 'self';
  return startTimeOf(writer.pid) === writer.startTime ? 'alive' : 'dead';
}
