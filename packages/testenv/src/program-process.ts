/**
 * A program under test as a child process, e.g. a provisioner CLI run exactly as its container
 * image runs it: own process group, captured output, graceful stop, and a watchdog that stops it if
 * the test runner dies first.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stopProcessGroup } from './process-group.ts';
import { startReaper } from './reaper.ts';
import { stopWaiting, waitFor } from './wait-for.ts';

/** An executable and its arguments. */
export interface ProgramCommand {
  readonly command: string;
  readonly args: readonly string[];
}

/** Options of {@link startProgram}. */
export interface StartProgramOptions extends ProgramCommand {
  /** The whole environment of the program; nothing is inherited implicitly. */
  readonly env: NodeJS.ProcessEnv;
  /** Called with every chunk of standard output and error, e.g. to echo it. */
  readonly onOutput?: (text: string) => void;
}

/** A started program. */
export interface RunningProgram {
  readonly pid: number;
  /** Standard output and error so far, interleaved (the last 4 MiB). */
  output(): string;
  /** Resolves with the output once it matches `pattern`; rejects if the program exits first. */
  waitForOutput(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** The exit code (`null` after a signal) once the program has exited. */
  readonly exited: Promise<number | null>;
  /** SIGTERM to its process group, SIGKILL after `graceMs`; resolves with the exit code. */
  stop(graceMs?: number): Promise<number | null>;
}

const maxOutputChars = 4 << 20;

/** Starts a program in its own process group. */
export async function startProgram(options: StartProgramOptions): Promise<RunningProgram> {
  const pidsDir = await mkdtemp(join(tmpdir(), 'program-'));
  const reaper = startReaper(pidsDir);
  const child = spawn(options.command, options.args, {
    env: options.env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const record = (chunk: Buffer): void => {
    const text = chunk.toString();
    output = (output + text).slice(-maxOutputChars);
    options.onOutput?.(text);
  };
  child.stdout.on('data', record);
  child.stderr.on('data', record);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let exitCode: number | null | undefined;
  const watched = exited.then(async (code) => {
    exitCode = code;
    reaper.release();
    await rm(pidsDir, { recursive: true, force: true });
  });
  const pid = await new Promise<number>((resolve, reject) => {
    child.once('error', reject);
    child.once('spawn', () => resolve(child.pid ?? 0));
  });
  await writeFile(join(pidsDir, 'program.pid'), `${pid}\n`);

  return {
    pid,
    output: () => output,
    exited,
    waitForOutput: (pattern, timeoutMs = 60_000) =>
      waitFor(
        () => {
          if (pattern.test(output)) return output;
          if (exitCode !== undefined) {
            const message = `${options.command} exited with ${exitCode} before printing ${pattern}:\n${output}`;
            throw stopWaiting(new Error(message));
          }
          return undefined;
        },
        { timeoutMs, intervalMs: 100, description: `output matching ${pattern}` },
      ),
    async stop(graceMs = 15_000) {
      await stopProcessGroup(pid, graceMs);
      await watched;
      return exited;
    },
  };
}

/**
 * The TypeScript source of workspace bin `bin` of the package in `packageDir`. The bin is a shim in
 * `bin/` (committed, so npm links it before any build) that imports `../dist/<file>.js`, whose
 * source is `src/<file>.ts`.
 */
export function binSource(packageDir: string, bin: string): string {
  const manifest = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as {
    bin?: Record<string, string>;
  };
  const target = manifest.bin?.[bin];
  if (target === undefined) throw new Error(`${packageDir}/package.json has no bin named ${bin}`);
  const shim = readFileSync(join(packageDir, target), 'utf8');
  const built = /^import '\.\.\/dist\/(.+)\.js';$/mu.exec(shim)?.[1];
  if (built === undefined) throw new Error(`bin ${bin} (${target}) does not import a file of dist/`);
  return join(packageDir, 'src', `${built}.ts`);
}

/**
 * How to run a workspace package's bin from source with the current Node (which strips types): its
 * source (`binSource`), with the `@kube-provisioner/source` condition resolving other workspace
 * packages to their sources too. The built image runs the same entry point from `dist/`.
 */
export function workspaceBinCommand(packageDir: string, bin: string): ProgramCommand {
  const source = binSource(packageDir, bin);
  return { command: process.execPath, args: ['--conditions=@kube-provisioner/source', source] };
}
