/** The two renderings of an {@link AuditReport}: a table for people and JSON for programs. */
import type { AuditReport } from './audit.ts';

/** `table` (default) or `json`. */
export type OutputFormat = 'table' | 'json';

/** The report as one JSON document (with a trailing newline). */
export function formatJson(report: AuditReport): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}

/**
 * The report as a summary line and, when there are findings, an aligned table of kind, PV, claim,
 * path and message.
 */
export function formatTable(report: AuditReport): string {
  const { summary } = report;
  const head =
    `${report.provisioner} on ${report.root}: ${summary.persistentVolumes} PVs, ` +
    `${summary.volumeDirectories} volume directories (${summary.archived} archived, ${summary.retained} retained), ` +
    `${summary.findings === 0 ? 'no findings' : `${summary.findings} finding${summary.findings === 1 ? '' : 's'}`}`;
  if (report.findings.length === 0) return `${head}\n`;
  const rows = [
    ['KIND', 'PV', 'CLAIM', 'PATH', 'MESSAGE'],
    ...report.findings.map((finding) => [
      finding.kind,
      finding.pvs.join(',') || '-',
      finding.claim === undefined ? '-' : `${finding.claim.namespace}/${finding.claim.name}`,
      finding.path ?? '-',
      finding.message,
    ]),
  ];
  const widths =
    rows[0]?.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length))) ?? [];
  const lines = rows.map((row) =>
    row
      .map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column] ?? 0)))
      .join('  '),
  );
  return `${head}\n\n${lines.join('\n')}\n`;
}
