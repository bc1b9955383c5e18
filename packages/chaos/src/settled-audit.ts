/** The orphan audit of a chaos target, taken once the writers' temporary record files have gone. */
import { type AuditReport, auditVolumes } from '@kube-provisioner/audit';
import type { KubeApi } from '@kube-provisioner/controller';
import { waitFor } from '@kube-provisioner/testenv';
import type { ChaosTarget } from './chaos-targets.ts';

/** How long an audit waits for the temporary record files of resumed or crashed writers to go. */
const temporaryFilesSettleMs = 15_000;

function audit(api: KubeApi, target: ChaosTarget): Promise<AuditReport> {
  return auditVolumes({
    api,
    provisionerName: target.provisionerName,
    root: target.root,
    layout: target.layout,
    graceMs: 0,
  });
}

/**
 * The audit once no temporary record file is left, or as it stands when the wait gives up. Each
 * phase ends under a pause: the paused leader, resumed, removes its own in-flight temporary file
 * at its next step, which may come just after the phase's work is done. A temporary file that
 * stays (a writer that never cleans up, a crash nobody sweeps) is still reported, after the wait.
 */
export async function settledAudit(api: KubeApi, target: ChaosTarget): Promise<AuditReport> {
  const withoutTemporaryFiles = async (): Promise<AuditReport | undefined> => {
    const report = await audit(api, target);
    return report.findings.some((finding) => finding.kind === 'temporary-file') ? undefined : report;
  };
  try {
    return await waitFor(withoutTemporaryFiles, {
      timeoutMs: temporaryFilesSettleMs,
      intervalMs: 500,
      description: `${target.name}'s temporary record files to be gone`,
    });
  } catch {
    return audit(api, target);
  }
}
