/**
 * Re-records test/fixtures/upstream-chart-facts.json: renders the upstream nfs-subdir-external-provisioner
 * chart with the pinned helm for every case of test/support/chart-matrix.ts and keeps only the
 * observed facts (names, labels, selectors, provisioner, bindings), plus upstream's default values,
 * which `helm upgrade --reuse-values` carries into our chart.
 *
 * Usage (from the repository root), with a checkout or a bare clone of the upstream repository:
 *   npm run chart:record-upstream -w examples/nfs -- --git-dir <clone>/.git [--ref <commit>]
 *   npm run chart:record-upstream -w examples/nfs -- --chart <checkout>/charts/nfs-subdir-external-provisioner
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { helmBinary } from '@kube-provisioner/testenv/internal';
import { loadYaml } from '@kubernetes/client-node';
import { objectFacts, renderChart } from '../test/support/chart-facts.ts';
import { chartCases } from '../test/support/chart-matrix.ts';
import { type UpstreamChartFixture, upstreamFixturePath } from '../test/support/upstream-fixture.ts';

const run = promisify(execFile);
const chartPath = 'charts/nfs-subdir-external-provisioner';

async function extract(gitDir: string, ref: string, into: string): Promise<string> {
  const archive = join(into, 'chart.tar');
  await run('git', ['--git-dir', gitDir, 'archive', '-o', archive, ref, chartPath]);
  await run('tar', ['-xf', archive, '-C', into]);
  return join(into, chartPath);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { 'git-dir': { type: 'string' }, ref: { type: 'string' }, chart: { type: 'string' } },
  });
  const scratch = await mkdtemp(join(tmpdir(), 'upstream-chart-'));
  try {
    let chartDir = values.chart;
    let source = chartDir ?? '';
    if (values['git-dir']) {
      const ref = values.ref ?? 'HEAD';
      const { stdout } = await run('git', ['--git-dir', values['git-dir'], 'rev-parse', `${ref}^{commit}`]);
      source = `kubernetes-sigs/nfs-subdir-external-provisioner@${stdout.trim()}`;
      chartDir = await extract(values['git-dir'], ref, scratch);
    }
    if (!chartDir) throw new Error('give --git-dir <upstream clone> or --chart <chart directory>');

    const helm = await helmBinary({ onProgress: (line) => process.stderr.write(`${line}\n`) });
    const chart = loadYaml<{ name: string; version: string; appVersion: string }>(
      (await run(helm, ['show', 'chart', chartDir])).stdout,
    );
    const defaultValues = loadYaml<Record<string, unknown>>(
      (await run(helm, ['show', 'values', chartDir])).stdout,
    );
    const cases: UpstreamChartFixture['cases'] = {};
    for (const chartCase of chartCases) {
      cases[chartCase.id] = objectFacts(await renderChart(helm, chartDir, chartCase));
    }
    const fixture: UpstreamChartFixture = {
      source,
      chart: { name: chart.name, version: chart.version, appVersion: String(chart.appVersion) },
      defaultValues,
      cases,
    };
    await mkdir(join(upstreamFixturePath, '..'), { recursive: true });
    await writeFile(upstreamFixturePath, `${JSON.stringify(fixture, null, 2)}\n`);
    process.stderr.write(
      `recorded ${chartCases.length} cases of ${chart.name} ${chart.version} into ${upstreamFixturePath}\n`,
    );
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

await main();
