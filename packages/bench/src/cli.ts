#!/usr/bin/env node
/**
 * `npm run bench`: runs the chosen scenarios against a real control plane, prints a table per
 * scenario and writes the JSON results and the latency chart. Figures are reported, never asserted.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname } from 'node:path';
import { openBenchCluster } from './bench-cluster.ts';
import {
  type BenchOptions,
  BenchUsageError,
  benchUsage,
  parseBenchOptions,
  standaloneScenarios,
} from './bench-options.ts';
import { runBurst } from './burst.ts';
import { runCeiling } from './ceiling.ts';
import { runCompare } from './compare.ts';
import { compareTable } from './compare-table.ts';
import { runDelete } from './deletion.ts';
import { ensureBenchGo } from './go-build.ts';
import { type GridTable, renderGrid } from './grid-table.ts';
import { latencyCdfSvg } from './latency-chart.ts';
import { latencyTimelineSvg } from './latency-timeline-chart.ts';
import { runNfsOperations } from './nfs-operations.ts';
import { nfsOperationsTable } from './nfs-operations-table.ts';
import { libraryExampleCli, type OursProgram, prepareOurs } from './ours-program.ts';
import { startProvisioner } from './provisioner-process.ts';
import type { BenchReport, ScenarioResults } from './report.ts';
import { renderReport, renderTable, scenarioTables } from './results-table.ts';
import { createRunContext, type RunContext } from './run-context.ts';
import { describeEnvironment, finishEnvironment } from './run-environment.ts';
import { runScale } from './scale.ts';
import { scaleTables } from './scale-table.ts';
import { runUnbundled } from './unbundled.ts';
import { unbundledTables } from './unbundled-table.ts';
import { version } from './version.ts';
import { fileSystemLabel, volumeFileSystem } from './volume-file-system.ts';

const log = (message: string): void => {
  process.stderr.write(`${message}\n`);
};

function printTables(results: ScenarioResults): void {
  for (const table of scenarioTables(results)) process.stderr.write(`\n${renderTable(table)}\n\n`);
}

function printGrids(tables: readonly GridTable[]): void {
  for (const table of tables) process.stderr.write(`\n${renderGrid(table)}\n\n`);
}

async function writeOutput(path: string, content: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, content);
}

/** burst, then delete of its claims with the same provisioner, then the ceiling with it stopped. */
async function runBurstScenarios(
  context: RunContext,
  options: BenchOptions,
  ours: OursProgram,
): Promise<ScenarioResults> {
  const space = await context.openClaimNamespace('burst');
  const provisioner = await startProvisioner({
    implementation: { name: 'ours', program: ours },
    kubeconfigPath: context.cluster.kubeconfigPath,
    root: space.root,
    provisionerName: context.provisionerName,
    leaseNamespace: space.namespace,
    extraArgs: options.provisionerArgs,
    nodeFlags: [
      ...options.nodeFlags,
      ...(options.cpuProfileDir === undefined
        ? []
        : ['--cpu-prof', `--cpu-prof-dir=${options.cpuProfileDir}`]),
    ],
  });
  let results: ScenarioResults;
  let template: Awaited<ReturnType<typeof runBurst>>['template'];
  try {
    log(
      `burst: provisioner ready in ${((provisioner.syncedAt - provisioner.spawnedAt) / 1000).toFixed(2)} s`,
    );
    const burst = await runBurst(context, space, provisioner, options.claims);
    template = burst.template;
    results = { burst: burst.result };
    printTables(results);
    const title = `claim → PV latency, ${options.claims} claims at once (p99 ${burst.result.latency_ms.p99} ms)`;
    await writeOutput(options.chart, latencyCdfSvg(burst.latenciesMs, { title }));
    if (options.scenarios.includes('delete')) {
      const deletion = await runDelete(context, space, provisioner, burst.claimNames);
      printTables({ delete: deletion });
      results = { ...results, delete: deletion };
    }
  } finally {
    await provisioner.stop();
    await space.close();
  }
  if (options.scenarios.includes('ceiling')) {
    const ceiling = await runCeiling(context, template, options.claims, results.burst?.claims_per_s ?? 0);
    printTables({ ceiling });
    results = { ...results, ceiling };
  }
  return results;
}

/** The scenarios that run the hostpath CLI: burst (with ceiling and delete), scale and compare. */
async function runHostpathScenarios(
  context: RunContext,
  options: BenchOptions,
  ours: OursProgram,
): Promise<ScenarioResults> {
  let results: ScenarioResults = {};
  if (options.scenarios.includes('burst')) results = await runBurstScenarios(context, options, ours);
  if (options.scenarios.includes('scale')) {
    const scale = await runScale(context, {
      ours,
      goBinary: await ensureBenchGo(log),
      existingPairs: options.existingPairs,
      claims: options.claims,
      rounds: options.rounds,
      qps: options.compareQps,
      burst: options.compareBurst,
      provisionerArgs: options.provisionerArgs,
      nodeFlags: options.nodeFlags,
      log,
      logDir: options.logDir,
    });
    printGrids(scaleTables(scale));
    results = { ...results, scale };
  }
  if (options.scenarios.includes('compare')) {
    const goBinary = await ensureBenchGo(log);
    const library = await prepareOurs(options.ours, log, libraryExampleCli(), 'custom-provisioner');
    try {
      const compare = await runCompare(context, {
        claims: options.claims,
        rounds: options.rounds,
        qps: options.compareQps,
        burst: options.compareBurst,
        goBinary,
        ours,
        library,
        provisionerArgs: options.provisionerArgs,
        nodeFlags: options.nodeFlags,
        goDefaults: options.scenarios.includes('go-defaults'),
        log,
      });
      results = { ...results, compare: compare.result };
      printGrids([compareTable(compare.result)]);
      const title = `annotated → PV over time, ${options.claims} claims at once, QPS ${options.compareQps} (round 1)`;
      await writeOutput(
        options.timelineChart,
        latencyTimelineSvg(
          [
            { name: 'Go library v13', color: '#1f5fbf', points: compare.latencyPoints.go ?? [] },
            { name: 'ours', color: '#d9480f', points: compare.latencyPoints.ours ?? [] },
            { name: 'our library alone', color: '#2b8a3e', points: compare.latencyPoints.library ?? [] },
          ].filter((series) => series.points.length > 0),
          title,
        ),
      );
    } finally {
      await library.close();
    }
  }
  return results;
}

async function run(options: BenchOptions): Promise<void> {
  const volumeDir = options.volumeDir ?? tmpdir();
  // nfs-operations and unbundled run programs of their own; the hostpath CLI only runs for the rest.
  const runsHostpath = options.scenarios.some((name) => !standaloneScenarios.includes(name));
  const fileSystem = volumeFileSystem(volumeDir);
  if (runsHostpath && fileSystem.journal === false) {
    log(
      `volume roots in ${volumeDir}: ext4 without a journal, where creates after deletions cost several times ` +
        'the kernel time (docs/benchmarks-history.md, ninth round); --volume-dir on a journaled file system avoids that',
    );
  }
  const cluster = await openBenchCluster(log);
  let context: RunContext | undefined;
  let ours: OursProgram | undefined;
  try {
    const environment = await describeEnvironment(cluster.kubernetesVersion, import.meta.dirname);
    context = await createRunContext(cluster, volumeDir);
    log(`run ${context.runId}: ${options.scenarios.join(', ')}`);
    let results: ScenarioResults = {};
    if (runsHostpath) {
      ours = await prepareOurs(options.ours, log);
      results = await runHostpathScenarios(context, options, ours);
    }
    if (options.scenarios.includes('nfs-operations')) {
      const nfsOperations = await runNfsOperations(context, {
        claims: options.nfsOperationsClaims,
        upstream: options.upstream,
        log,
      });
      printGrids([nfsOperationsTable(nfsOperations)]);
      results = { ...results, nfs_operations: nfsOperations };
    }
    if (options.scenarios.includes('unbundled')) {
      const unbundled = await runUnbundled(context, {
        rounds: options.rounds,
        idleSeconds: options.idleSeconds,
        imports: options.imports,
        baseline: options.baseline,
        goBinary: await ensureBenchGo(log),
        log,
      });
      printGrids(unbundledTables(unbundled));
      results = { ...results, unbundled };
    }
    const report: BenchReport = {
      ...finishEnvironment(environment),
      ...(ours === undefined
        ? {}
        : {
            ours_build: ours.build,
            provisioner_flags: [...ours.nodeFlags, ...options.nodeFlags, ...options.provisionerArgs],
            volume_dir: { path: volumeDir, file_system: fileSystemLabel(fileSystem) },
          }),
      scenarios: results,
    };
    await writeOutput(options.out, `${JSON.stringify(report, null, 2)}\n`);
    process.stdout.write(`${renderReport(report)}\n\nresults: ${options.out}\n`);
    if (results.burst !== undefined) process.stdout.write(`latency chart: ${options.chart}\n`);
    if (results.compare !== undefined) process.stdout.write(`latency timeline: ${options.timelineChart}\n`);
  } finally {
    await ours?.close();
    await context?.close();
    await cluster.close();
  }
}

async function main(): Promise<number> {
  let options: BenchOptions;
  try {
    // npm runs scripts in the root package; relative paths are meant from where the user typed.
    options = parseBenchOptions(process.argv.slice(2), process.env.INIT_CWD ?? process.cwd());
  } catch (err) {
    if (!(err instanceof BenchUsageError)) throw err;
    process.stderr.write(`bench: ${err.message}\n\n${benchUsage()}\n`);
    return 2;
  }
  if (options.help) {
    process.stdout.write(`${benchUsage()}\n`);
    return 0;
  }
  if (options.version) {
    process.stdout.write(`kube-provisioner-bench ${version}\n`);
    return 0;
  }
  await run(options);
  return 0;
}

try {
  process.exitCode = await main();
} catch (err) {
  process.stderr.write(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
}
