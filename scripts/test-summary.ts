/**
 * The end of `.ci/run`: totals the vitest reports this run wrote (`{packages,examples}/<pkg>/.vitest/*.json`,
 * one per package task; older ones are left out), names every failure (CI keeps only the end of the
 * log), lists the 15 slowest test files with their hooks (from scripts/file-durations-reporter.ts),
 * and ends with the run's total time and one line `N passed, N failed, N skipped`. Exits 1 when
 * anything failed or no report was written.
 *
 * `node scripts/test-summary.ts [--elapsed <seconds>] [--root <dir>]`: `--elapsed` is the run's time
 * so far (bash's `$SECONDS`); reports older than its start are not counted. `--root` defaults to the
 * repository.
 */
import { globSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';

/** The part of a vitest JSON report this summary reads. */
interface Report {
  readonly numPassedTests: number;
  readonly numFailedTests: number;
  readonly numFailedTestSuites: number;
  readonly numPendingTests: number;
  readonly numTodoTests: number;
  readonly testResults?: readonly {
    readonly name: string;
    readonly status: string;
    readonly message?: string;
    readonly assertionResults?: readonly {
      readonly fullName: string;
      readonly status: string;
      readonly failureMessages?: readonly string[];
    }[];
  }[];
}

/** One line of a `*.files.json` report. */
interface FileDuration {
  readonly file: string;
  readonly durationMs: number;
}

const slowestCount = 15;

function formatDuration(ms: number): string {
  const seconds = Math.round(ms / 1000);
  return `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, '0')}s`;
}

const oneLine = (text: string): string => text.replace(/\s+/gu, ' ').slice(0, 400);

const { values } = parseArgs({ options: { elapsed: { type: 'string' }, root: { type: 'string' } } });
const root = values.root ?? join(import.meta.dirname, '..');
const elapsedMs = values.elapsed === undefined ? undefined : Number(values.elapsed) * 1000;
// `$SECONDS` counts whole seconds: a second of slack keeps this run's first report.
const runStart = elapsedMs === undefined ? 0 : Date.now() - elapsedMs - 1000;
const thisRun = (file: string): boolean => statSync(file).mtimeMs >= runStart;
const reports = globSync('{packages,examples}/*/.vitest/*.json', { cwd: root })
  .map((file) => join(root, file))
  .filter((file) => thisRun(file));

let passed = 0;
let failed = 0;
let skipped = 0;
let counted = 0;
const durations: FileDuration[] = [];
for (const file of reports) {
  if (file.endsWith('.files.json')) {
    durations.push(...(JSON.parse(readFileSync(file, 'utf8')) as FileDuration[]));
    continue;
  }
  const report = JSON.parse(readFileSync(file, 'utf8')) as Report;
  counted++;
  passed += report.numPassedTests;
  // A file that fails outside its tests (an import, a hook) counts once.
  const suiteOnly = report.numFailedTestSuites > 0 && report.numFailedTests === 0;
  failed += report.numFailedTests + (suiteOnly ? report.numFailedTestSuites : 0);
  skipped += report.numPendingTests + report.numTodoTests;
  for (const suite of report.testResults ?? []) {
    const failures = (suite.assertionResults ?? []).filter((test) => test.status === 'failed');
    const name = relative(root, suite.name);
    if (suite.status === 'failed' && failures.length === 0) {
      console.log(`FAILED ${name}: ${oneLine(suite.message ?? '')}`);
    }
    for (const test of failures) {
      console.log(`FAILED ${name} > ${test.fullName}: ${oneLine((test.failureMessages ?? []).join(' '))}`);
    }
  }
}
if (counted === 0) {
  console.log('FAILED: no vitest report was written by this run');
  failed++;
}

if (durations.length > 0) {
  console.log(`\nslowest test files (of ${durations.length}, hooks included):`);
  const slowest = durations.sort((a, b) => b.durationMs - a.durationMs).slice(0, slowestCount);
  for (const { file, durationMs } of slowest) {
    console.log(`${formatDuration(durationMs).padStart(8)}  ${relative(root, file)}`);
  }
}
if (elapsedMs !== undefined) console.log(`\ntotal ${formatDuration(elapsedMs)}`);
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exitCode = failed > 0 ? 1 : 0;
