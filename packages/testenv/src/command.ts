import { spawn } from 'node:child_process';
import { appendFile } from 'node:fs/promises';

/** A required executable is not on `PATH`. */
export class MissingToolError extends Error {
  override readonly name = 'MissingToolError';
  /** The executable that was looked up, e.g. `go`. */
  readonly tool: string;

  constructor(tool: string, hint: string) {
    super(`${tool} not found on PATH: ${hint}`);
    this.tool = tool;
  }
}

/** Options of {@link runCommand}. */
export interface RunCommandOptions {
  readonly cwd?: string;
  readonly env?: NodeJS.ProcessEnv;
  /** File that receives the command line and its output, for diagnosing failures later. */
  readonly logFile?: string;
  /** Why the tool is needed; becomes part of the {@link MissingToolError}. */
  readonly missingHint?: string;
}

const errorTailBytes = 4000;

/**
 * Runs an executable to completion and resolves with its standard output. Rejects with
 * {@link MissingToolError} when the executable does not exist, or with an error carrying the tail of
 * its output when it exits non-zero.
 */
export async function runCommand(
  file: string,
  args: readonly string[],
  options: RunCommandOptions = {},
): Promise<string> {
  const { logFile } = options;
  if (logFile) await appendFile(logFile, `$ ${[file, ...args].join(' ')}\n`);
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const stdout: Buffer[] = [];
    let output = '';
    let pendingLog: Promise<void> = Promise.resolve();
    const record = (chunk: Buffer): void => {
      output = (output + chunk.toString()).slice(-errorTailBytes);
      if (logFile) pendingLog = pendingLog.then(() => appendFile(logFile, chunk));
    };
    child.stdout.on('data', (chunk: Buffer) => {
      stdout.push(chunk);
      record(chunk);
    });
    child.stderr.on('data', record);
    child.on('error', (err: NodeJS.ErrnoException) => {
      reject(
        err.code === 'ENOENT'
          ? new MissingToolError(file, options.missingHint ?? 'install it and retry')
          : err,
      );
    });
    child.on('close', (code, signal) => {
      void pendingLog.then(() => {
        if (code === 0) resolve(Buffer.concat(stdout).toString());
        else {
          const how = signal ? `was killed by ${signal}` : `exited with ${code}`;
          reject(new Error(`\`${[file, ...args].join(' ')}\` ${how}:\n${output.trim()}`));
        }
      });
    });
  });
}
