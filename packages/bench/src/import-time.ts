/**
 * The cost of loading the library: `import('@kube-provisioner/controller')` in a fresh `node`
 * process, resolved from a project that installed it.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

/** One import in a fresh process. */
export interface ImportSample {
  readonly ms: number;
  /** CPU time (user + system) of the import: steadier than wall time on a busy machine. */
  readonly cpuMs: number;
  /** The process's peak RSS. */
  readonly maxRssMb: number;
}

const script = `
  const started = performance.now();
  const cpu = process.cpuUsage();
  await import('@kube-provisioner/controller');
  const ms = performance.now() - started;
  const { user, system } = process.cpuUsage(cpu);
  console.log(JSON.stringify({ ms, cpuMs: (user + system) / 1000, maxRssMb: process.resourceUsage().maxRSS / 1024 }));
`;

/** Times the import in one fresh plain `node` (no flags) started in `dir`. */
export async function timeImport(dir: string): Promise<ImportSample> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], {
    cwd: dir,
  });
  return JSON.parse(stdout) as ImportSample;
}
