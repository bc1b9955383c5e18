// `.ci/run` is the README's `npm install` and `npm test` and a summary: scripts/check-ci-run.ts (in
// `npm run lint`) keeps it so, and scripts/test-summary.ts totals the run's reports and names its
// slowest files.
import { execFile } from 'node:child_process';
import { mkdir, readFile, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { temporaryDir } from './support/temporary-dir.ts';

const repository = join(import.meta.dirname, '..', '..', '..');
const checkScript = join(repository, 'scripts', 'check-ci-run.ts');
const summaryScript = join(repository, 'scripts', 'test-summary.ts');

function run(
  script: string,
  args: readonly string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [script, ...args], (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : Number(err.code), stdout, stderr });
    });
  });
}

describe('scripts/check-ci-run.ts', () => {
  it("passes the repository's .ci/run and README", async () => {
    expect(await run(checkScript, [])).toMatchObject({ code: 0, stderr: '' });
  });

  it('fails when .ci/run grows a build step, naming the line', async () => {
    const dir = await temporaryDir('ci-run-');
    const ciRun = (await readFile(join(repository, '.ci', 'run'), 'utf8')).replace(
      'step "npm test"',
      'npm run image\nstep "npm test"',
    );
    await writeFile(join(dir, 'run'), ciRun);
    const result = await run(checkScript, ['--ci-run', join(dir, 'run')]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/run:\d+: runs `npm run image`; \.ci\/run may run only/u);
  });

  it('fails when a command is chained onto a README command', async () => {
    const dir = await temporaryDir('ci-run-');
    const ciRun = (await readFile(join(repository, '.ci', 'run'), 'utf8')).replace(
      /^npm install$/mu,
      'npm install && node packages/testenv/src/cli.ts build',
    );
    await writeFile(join(dir, 'run'), ciRun);
    expect((await run(checkScript, ['--ci-run', join(dir, 'run')])).code).toBe(1);
  });

  it('fails when the README no longer lists npm test in its Quick start', async () => {
    const dir = await temporaryDir('ci-run-');
    const readme = (await readFile(join(repository, 'README.md'), 'utf8')).replace(/^npm test .*$/mu, '');
    await writeFile(join(dir, 'README.md'), readme);
    const result = await run(checkScript, ['--readme', join(dir, 'README.md')]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Quick start');
  });
});

describe('scripts/test-summary.ts', () => {
  async function report(root: string, name: string, body: object): Promise<string> {
    const dir = join(root, 'packages', 'pkg', '.vitest');
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, name), JSON.stringify(body));
    return join(dir, name);
  }

  const counts = { numFailedTestSuites: 0, numPendingTests: 1, numTodoTests: 0 };

  it("totals this run's reports, leaves out older ones, and lists the slowest files with the total time", async () => {
    const root = await temporaryDir('summary-');
    await report(root, 'test.json', { ...counts, numPassedTests: 5, numFailedTests: 0, testResults: [] });
    const stale = await report(root, 'old.json', { ...counts, numPassedTests: 0, numFailedTests: 3 });
    await utimes(stale, new Date(2000, 0, 1), new Date(2000, 0, 1));
    const durations = Array.from({ length: 20 }, (_, i) => ({
      file: join(root, 'packages', 'pkg', 'test', `f${i}.test.ts`),
      project: 'pkg',
      durationMs: i * 1000,
    }));
    await report(root, 'test.files.json', durations);

    const result = await run(summaryScript, ['--root', root, '--elapsed', '125']);
    expect(result.code).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines.at(-1)).toBe('5 passed, 0 failed, 1 skipped');
    expect(lines.at(-2)).toBe('total 2m05s');
    const listed = lines.filter((line) => line.includes('.test.ts'));
    expect(listed).toHaveLength(15);
    expect(listed[0]).toBe('   0m19s  packages/pkg/test/f19.test.ts');
    expect(listed.at(-1)).toBe('   0m05s  packages/pkg/test/f5.test.ts');
  });

  it('names each failure and exits 1', async () => {
    const root = await temporaryDir('summary-');
    await report(root, 'test.json', {
      ...counts,
      numPassedTests: 1,
      numFailedTests: 1,
      testResults: [
        {
          name: join(root, 'packages', 'pkg', 'test', 'a.test.ts'),
          status: 'failed',
          assertionResults: [{ fullName: 'a b', status: 'failed', failureMessages: ['Error:\n  boom'] }],
        },
      ],
    });
    const result = await run(summaryScript, ['--root', root]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('FAILED packages/pkg/test/a.test.ts > a b: Error: boom');
    expect(result.stdout.trim().split('\n').at(-1)).toBe('1 passed, 1 failed, 1 skipped');
  });

  it('fails when the run wrote no report', async () => {
    const result = await run(summaryScript, ['--root', await temporaryDir('summary-')]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('FAILED: no vitest report was written by this run');
  });
});
