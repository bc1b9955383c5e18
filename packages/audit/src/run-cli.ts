/**
 * The `kube-provisioner-audit` program: parse, audit, print, and the exit code. Exit codes: 0 no
 * findings, 1 findings, 2 usage, configuration or access error (nothing was judged).
 */
import { stat } from 'node:fs/promises';
import { createKubeApi } from '@kube-provisioner/controller';
import { isUsageError } from '@kube-provisioner/controller/cli';
import { auditVolumes } from './audit.ts';
import { type AuditCliOptions, parseAuditCliOptions, program, usage } from './cli-options.ts';
import { readQuotaProjects } from './quota-projects.ts';
import { formatJson, formatTable } from './report-format.ts';
import { version } from './version.ts';

/** The process the CLI runs in; tests pass their own. */
export interface AuditCliHost {
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly stdout: { write(text: string): unknown };
  readonly stderr: { write(text: string): unknown };
}

/** Exit code: no findings. */
export const exitClean = 0;
/** Exit code: the audit found something. */
export const exitFindings = 1;
/** Exit code: bad flags, an unusable root or kubeconfig, or an API error; nothing was judged. */
export const exitError = 2;

/** Runs the audit CLI in `host` and resolves with its exit code; never rejects. */
export async function runAuditCli(host: AuditCliHost): Promise<number> {
  let options: AuditCliOptions;
  try {
    options = parseAuditCliOptions(host.argv, host.env);
  } catch (err) {
    if (!isUsageError(err)) throw err;
    host.stderr.write(`${program}: ${err.message}\n\n${usage()}\n`);
    return exitError;
  }
  if (options.help) {
    host.stdout.write(`${usage()}\n`);
    return exitClean;
  }
  if (options.version) {
    host.stdout.write(`${program} ${version}\n`);
    return exitClean;
  }
  try {
    const rootStats = await stat(options.root).catch((err: Error) => {
      throw new Error(`cannot read the root ${options.root}: ${err.message}`);
    });
    if (!rootStats.isDirectory()) throw new Error(`the root ${options.root} is not a directory`);
    // Read before the API is opened: a root without project quotas is a configuration error.
    const projectIds = options.quotaProjects ? await readQuotaProjects(options.root) : undefined;
    const source = options.kubeconfig === undefined ? 'in-cluster' : { kubeconfig: options.kubeconfig };
    const api = createKubeApi(source, { userAgent: program });
    try {
      const report = await auditVolumes({
        api,
        provisionerName: options.provisionerName,
        root: options.root,
        layout: options.layout,
        graceMs: options.graceMs,
        maxDepth: options.maxDepth,
        projectIds,
      });
      host.stdout.write(options.output === 'json' ? formatJson(report) : formatTable(report));
      return report.findings.length === 0 ? exitClean : exitFindings;
    } finally {
      await api.close();
    }
  } catch (err) {
    host.stderr.write(`${program}: ${err instanceof Error ? err.message : String(err)}\n`);
    return exitError;
  }
}
