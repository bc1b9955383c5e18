/**
 * Replicas of a provisioner CLI run the way a Deployment's pods run: each is restarted a moment after
 * it exits, whatever killed it. Every incarnation's JSON log is parsed as it arrives for the lines the
 * chaos oracle needs (leader identity, side effects, leadership changes), and kept whole in a file.
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import type { WorkLine } from '@kube-provisioner/controller/testing';
import { type ProgramCommand, type RunningProgram, startProgram } from '@kube-provisioner/testenv';

/**
 * Log messages of side effects: the provisioners' own directory work and the controller's PV
 * creates and deletes (debug level, so replicas run with `VERBOSITY=4`).
 */
export const workMessages: ReadonlySet<string> = new Set([
  'volume directory ready',
  'volume directory deleted',
  'volume directory archived',
  'volume directory removed',
  'volume directory retained',
  'keeping the volume directory',
  'volume directory cloned',
  'expired archive removed',
  'snapshot taken',
  'snapshot data removed',
  'snapshot data retained',
  'Volume is provisioned',
  'Persistentvolume saved',
  'Volume deleted',
  'PersistentVolume deleted succeeded',
]);

/** The controller's line once it leads and its caches are synced; `component` is its identity. */
const startedMessage = 'Started provisioner controller';
const startingMessage = 'Starting provisioner controller';

/** One process of a replica. */
export interface Incarnation {
  readonly replica: number;
  readonly number: number;
  readonly program: RunningProgram;
  /** Its leader identity, once it logged one (it led). */
  identity: string | undefined;
  /** When it logged that its controller started, each time it started leading. */
  readonly startedAtMs: number[];
  readonly workLines: WorkLine[];
  /**
   * The work lines that finished a synchronous stretch a SIGSTOP froze: see {@link Incarnation.resumed}.
   * Not in {@link workLines}.
   */
  readonly resumeLines: WorkLine[];
  /**
   * Records that the harness is about to SIGCONT the process (call it just before). A SIGSTOP can
   * freeze the process between a side effect's lease check and its log line's timestamp, which is
   * then taken after the pause, when a successor may lead. That stretch is the first thing the process
   * runs when it resumes, so only its first line after the resume can carry such a stamp: if that
   * line is a work line it goes to {@link resumeLines}; every later one is judged as usual.
   */
  resumed(atMs: number): void;
  /** Exit code, `null` after a signal; `undefined` while it runs. */
  exitCode: number | null | undefined;
}

/** Options of {@link startReplicaSet}. */
export interface ReplicaSetOptions {
  /** Name in log files and messages. */
  readonly name: string;
  readonly command: ProgramCommand;
  readonly args: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  readonly replicas: number;
  /** Where the full logs go, one file per incarnation. */
  readonly logDir: string;
  /** Pause before a replica is restarted. Default 1 s. */
  readonly restartDelayMs?: number;
}

/** Running replicas. */
export interface ReplicaSet {
  readonly name: string;
  /** Every incarnation so far, oldest first. */
  readonly incarnations: readonly Incarnation[];
  /** The live incarnation whose identity is `identity`. */
  byIdentity(identity: string): Incarnation | undefined;
  /** Every work line of every incarnation. */
  workLines(): WorkLine[];
  /** Every incarnation's {@link Incarnation.resumeLines}. */
  resumeLines(): WorkLine[];
  /** Controller start times after `sinceMs`, from any incarnation. */
  startsAfter(sinceMs: number): number[];
  /** Stops restarting and stops every live incarnation gracefully. */
  stop(): Promise<void>;
}

interface LogLine {
  readonly time?: number;
  readonly msg?: string;
  readonly component?: string;
}

function parseLine(text: string): LogLine | undefined {
  if (!text.startsWith('{')) return undefined;
  try {
    return JSON.parse(text) as LogLine;
  } catch {
    return undefined;
  }
}

/** Starts `replicas` copies of the command and keeps them running until {@link ReplicaSet.stop}. */
export async function startReplicaSet(options: ReplicaSetOptions): Promise<ReplicaSet> {
  const incarnations: Incarnation[] = [];
  let stopping = false;
  const restartDelayMs = options.restartDelayMs ?? 1000;
  const logs: WriteStream[] = [];
  const launches = new Set<Promise<void>>();

  const launch = async (replica: number): Promise<void> => {
    const number = incarnations.filter((incarnation) => incarnation.replica === replica).length;
    const log = createWriteStream(join(options.logDir, `${options.name}-${replica}-${number}.log`));
    logs.push(log);
    let pending = '';
    // Filled in once the program has started; lines cannot arrive before the spawn returns.
    let self: Incarnation | undefined;
    // When the harness resumed the process, until its first line stamped after that.
    let resumedAtMs: number | undefined;
    const onLine = (text: string): void => {
      const line = parseLine(text);
      if (self === undefined || line?.msg === undefined || line.time === undefined) return;
      const firstAfterResume = resumedAtMs !== undefined && line.time >= resumedAtMs;
      if (firstAfterResume) resumedAtMs = undefined;
      if (line.msg === startingMessage && line.component) self.identity = line.component;
      if (line.msg === startedMessage) self.startedAtMs.push(line.time);
      if (workMessages.has(line.msg)) {
        const workLine = { identity: self.identity, atMs: line.time, msg: line.msg };
        (firstAfterResume ? self.resumeLines : self.workLines).push(workLine);
      }
    };
    const buffered: string[] = [];
    const program = await startProgram({
      command: options.command.command,
      args: [...options.command.args, ...options.args],
      env: options.env,
      onOutput(text) {
        log.write(text);
        pending += text;
        const lines = pending.split('\n');
        pending = lines.pop() ?? '';
        if (self === undefined) buffered.push(...lines);
        else for (const line of lines) onLine(line);
      },
    });
    self = {
      replica,
      number,
      program,
      identity: undefined,
      startedAtMs: [],
      workLines: [],
      resumeLines: [],
      resumed(atMs) {
        resumedAtMs = atMs;
      },
      exitCode: undefined,
    };
    incarnations.push(self);
    for (const line of buffered.splice(0)) onLine(line);
    const incarnation = self;
    void program.exited.then(async (code) => {
      incarnation.exitCode = code;
      if (stopping) return;
      await new Promise((resolve) => setTimeout(resolve, restartDelayMs));
      if (stopping) return;
      const relaunch = launch(replica);
      launches.add(relaunch);
      await relaunch.finally(() => launches.delete(relaunch));
    });
  };

  for (let replica = 0; replica < options.replicas; replica++) await launch(replica);

  return {
    name: options.name,
    incarnations,
    byIdentity: (identity) =>
      incarnations.find(
        (incarnation) => incarnation.identity === identity && incarnation.exitCode === undefined,
      ),
    workLines: () => incarnations.flatMap((incarnation) => incarnation.workLines),
    resumeLines: () => incarnations.flatMap((incarnation) => incarnation.resumeLines),
    startsAfter: (sinceMs) =>
      incarnations
        .flatMap((incarnation) => incarnation.startedAtMs)
        .filter((at) => at > sinceMs)
        .sort((a, b) => a - b),
    async stop() {
      stopping = true;
      await Promise.allSettled([...launches]);
      await Promise.all(
        incarnations.filter((incarnation) => incarnation.exitCode === undefined).map((i) => i.program.stop()),
      );
      await Promise.all(logs.map((log) => new Promise((resolve) => log.end(resolve))));
    },
  };
}
