/** The two renderings of an {@link AuditReport}: a table for people and JSON for programs. */
import type { AuditReport } from './audit.ts';

/** `table` (default) or `json`. */
export type OutputFormat = 'table' | 'json';

/** The report as one JSON document (with a trailing newline). */
export function formatJson(report: AuditReport): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}

/**
 * The report as a summary line; then, when there are findings, an aligned table of kind, PV, claim,
 * path and message; then, when there are archives, one of their PV, claim, age and expiry; then, when
 * there are snapshots, one of their name, source claim, readiness, age and state.
 */
export function formatTable(report: AuditReport): string {
  const { summary } = report;
  const head =
    `${report.provisioner} on ${report.root}: ${summary.persistentVolumes} PVs, ` +
    `${summary.volumeDirectories} volume directories (${summary.archived} archived, ${summary.retained} retained), ` +
    `${summary.findings === 0 ? 'no findings' : `${summary.findings} finding${summary.findings === 1 ? '' : 's'}`}`;
  const tables = [`${head}\n`];
  if (report.findings.length > 0) {
    tables.push(
      aligned([
        ['KIND', 'PV', 'CLAIM', 'PATH', 'MESSAGE'],
        ...report.findings.map((finding) => [
          finding.kind,
          finding.pvs.join(',') || '-',
          finding.claim === undefined ? '-' : `${finding.claim.namespace}/${finding.claim.name}`,
          finding.path ?? '-',
          finding.message,
        ]),
      ]),
    );
  }
  if (report.archives.length > 0) {
    tables.push(
      aligned([
        ['ARCHIVE', 'PV', 'CLAIM', 'AGE', 'EXPIRES'],
        ...report.archives.map((archive) => [
          archive.path,
          archive.pvName ?? '-',
          archive.claim === undefined ? '-' : `${archive.claim.namespace}/${archive.claim.name}`,
          archive.ageSeconds === undefined ? '-' : duration(archive.ageSeconds),
          archive.expiresInSeconds === undefined
            ? 'never'
            : archive.expiresInSeconds === 0
              ? 'expired'
              : `in ${duration(archive.expiresInSeconds)}`,
        ]),
      ]),
    );
  }
  if (report.snapshots.length > 0) {
    tables.push(
      aligned([
        ['SNAPSHOT', 'SOURCE', 'READY', 'AGE', 'STATE'],
        ...report.snapshots.map((snapshot) => [
          `${snapshot.namespace}/${snapshot.name}`,
          snapshot.source === undefined ? '-' : `${snapshot.namespace}/${snapshot.source}`,
          snapshot.readyToUse === undefined ? '-' : String(snapshot.readyToUse),
          duration(snapshot.ageSeconds),
          snapshot.state,
        ]),
      ]),
    );
  }
  return tables.join('\n');
}

/** Rows as columns padded to their widest cell (the last column is not padded). */
function aligned(rows: readonly (readonly string[])[]): string {
  const widths =
    rows[0]?.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length))) ?? [];
  const lines = rows.map((row) =>
    row
      .map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column] ?? 0)))
      .join('  '),
  );
  return `${lines.join('\n')}\n`;
}

/** `seconds` as the largest whole unit: `45s`, `12m`, `5h`, `30d`. */
function duration(seconds: number): string {
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)}h`;
  return `${Math.floor(seconds / 86_400)}d`;
}
