/**
 * Command line of `npm run bench`: which scenarios, how many claims, where the results go.
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { type OursBuild, oursBuilds } from './ours-program.ts';

/** The scenarios, in the order they run. */
export const scenarioNames = [
  'burst',
  'ceiling',
  'delete',
  'scale',
  'compare',
  'go-defaults',
  'nfs-operations',
  'unbundled',
] as const;

/** One scenario. */
export type ScenarioName = (typeof scenarioNames)[number];

/**
 * The scenarios that need more than a cluster, which `all` leaves out: `nfs-operations` boots the
 * test guest (root), `unbundled` packs the built workspace (`npm run build` first).
 */
export const standaloneScenarios: readonly ScenarioName[] = ['nfs-operations', 'unbundled'];

/** `--claims` of nfs-operations when not given: each claim costs seconds in the guest. */
const defaultNfsOperationsClaims = 50;

/** Validated options of one bench run. */
export interface BenchOptions {
  /**
   * Scenarios to run, in run order. `ceiling` and `delete` imply `burst`, whose volumes they use;
   * `go-defaults` (the Go reference at client-go's 5 QPS) implies `compare`, whose table shows it.
   */
  readonly scenarios: readonly ScenarioName[];
  /** Claims per scenario (N). */
  readonly claims: number;
  /** Claims of the nfs-operations scenario: `--claims` when given, else 50. */
  readonly nfsOperationsClaims: number;
  /**
   * The upstream nfs-subdir-external-provisioner binary nfs-operations measures beside ours; ours
   * alone when undefined.
   */
  readonly upstream: string | undefined;
  /**
   * Rounds of the compare, scale and unbundled scenarios; each runs every implementation, rotating
   * which goes first.
   */
  readonly rounds: number;
  /** unbundled: seconds each program idles after its caches synced before its RSS is read again. */
  readonly idleSeconds: number;
  /** unbundled: fresh processes that each time `import('@kube-provisioner/controller')`. */
  readonly imports: number;
  /**
   * unbundled: a directory of tarballs an earlier checkout packed, measured in the same rounds as a
   * before; none when undefined.
   */
  readonly baseline: string | undefined;
  /** Client QPS and burst both provisioners get in the compare and scale scenarios. */
  readonly compareQps: number;
  readonly compareBurst: number;
  /** Foreign PV/PVC pairs of the scale scenario (M), increasing: it fills to and measures at each. */
  readonly existingPairs: readonly number[];
  /** JSON results file. */
  readonly out: string;
  /** SVG latency chart, beside the JSON file unless given. */
  readonly chart: string;
  /** SVG of the compare scenario's latency over time: the `--out` path with `-timeline.svg`. */
  readonly timelineChart: string;
  /** Directory for the scale scenario's provisioner logs, one file per run; none when undefined. */
  readonly logDir: string | undefined;
  /** Directory for the provisioner's V8 CPU profile of the burst; none when undefined. */
  readonly cpuProfileDir: string | undefined;
  /** Extra flags of every provisioner started, e.g. `--kube-api-qps=100`. */
  readonly provisionerArgs: readonly string[];
  /** Extra Node.js flags of every provisioner started, e.g. `--max-semi-space-size=2`. */
  readonly nodeFlags: readonly string[];
  /** How ours runs: as its image runs it (default), or from TypeScript sources. */
  readonly ours: OursBuild;
  /**
   * Where the provisioners' roots are made (default: the temporary directory). Another file system
   * separates the storage's cost from the provisioners' own, e.g. `/dev/shm` (tmpfs: no disk I/O).
   */
  readonly volumeDir: string | undefined;
  readonly help: boolean;
  /** `--version`: print the version and exit 0. */
  readonly version: boolean;
}

/** Help text. */
export function benchUsage(): string {
  return [
    'Usage: npm run bench -- [flags]',
    '',
    `  --scenario <names>   comma-separated: ${scenarioNames.join(', ')} or all`,
    `                       (default burst,ceiling,delete,compare; all leaves out ${standaloneScenarios.join(' and ')})`,
    `  --claims <N>         claims per scenario (default 1000; nfs-operations: ${defaultNfsOperationsClaims})`,
    '  --existing <M[,M…]>  scale: foreign bound PV/PVC pairs, increasing sizes measured in turn (default 10000)',
    '  --rounds <R>         compare, scale, unbundled: rounds, rotating which implementation goes first (default 3)',
    '  --upstream <binary>  nfs-operations: upstream nfs-subdir-external-provisioner measured beside ours',
    '  --idle-seconds <S>   unbundled: idle wait after caches synced before RSS is read again (default 5)',
    "  --imports <I>        unbundled: fresh processes timing import('@kube-provisioner/controller') (default 7)",
    '  --baseline <dir>     unbundled: tarballs an earlier checkout packed, measured beside this one',
    '  --compare-qps <Q>    compare, scale: client QPS of every provisioner (default 1000)',
    '  --compare-burst <B>  compare, scale: client burst of every provisioner (default 1000)',
    '  --out <file.json>    results (default bench-results.json)',
    '  --chart <file.svg>   latency chart (default: the --out path with .svg)',
    '  --cpu-prof <dir>     write a V8 CPU profile of the provisioner during the burst',
    "  --log-dir <dir>      scale: write each provisioner's log to <dir>/<namespace>.log",
    '  --provisioner-arg=<flag>  extra provisioner CLI flag, repeatable (e.g. --provisioner-arg=--kube-api-qps=100)',
    '  --node-flag=<flag>   extra Node.js flag of the provisioner, repeatable (e.g. --node-flag=--max-semi-space-size=2)',
    "  --volume-dir <dir>   where the provisioners' roots are made (default: the temporary directory)",
    `  --ours <build>       ${oursBuilds.join(' or ')}: ours bundled and run as its image runs it, or from TypeScript sources (default image)`,
    '  --version            print the version',
    '  --help',
    '',
    'Runs against $TESTENV_KUBECONFIG when set, else starts its own control plane.',
    'nfs-operations needs root (the test guest); unbundled needs `npm run build` first.',
  ].join('\n');
}

/** Thrown for an invalid command line. */
export class BenchUsageError extends Error {
  override readonly name = 'BenchUsageError';
}

/**
 * Parses the command line; relative paths resolve against `cwd`.
 *
 * @throws BenchUsageError for unknown flags or invalid values.
 */
export function parseBenchOptions(argv: readonly string[], cwd: string): BenchOptions {
  let values: Record<string, string | boolean | string[] | undefined>;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        scenario: { type: 'string' },
        claims: { type: 'string' },
        existing: { type: 'string' },
        rounds: { type: 'string' },
        upstream: { type: 'string' },
        'idle-seconds': { type: 'string' },
        imports: { type: 'string' },
        baseline: { type: 'string' },
        'compare-qps': { type: 'string' },
        'compare-burst': { type: 'string' },
        out: { type: 'string' },
        chart: { type: 'string' },
        'cpu-prof': { type: 'string' },
        'log-dir': { type: 'string' },
        'provisioner-arg': { type: 'string', multiple: true },
        'node-flag': { type: 'string', multiple: true },
        ours: { type: 'string' },
        'volume-dir': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean' },
      },
    }));
  } catch (err) {
    throw new BenchUsageError((err as Error).message);
  }
  const text = (name: string): string | undefined => {
    const value = values[name];
    return typeof value === 'string' ? value : undefined;
  };
  const out = resolve(cwd, text('out') ?? 'bench-results.json');
  const chart = text('chart');
  const cpuProfileDir = text('cpu-prof');
  const volumeDir = text('volume-dir');
  const logDir = text('log-dir');
  const claims = text('claims');
  const upstream = text('upstream');
  const baseline = text('baseline');
  return {
    scenarios: parseScenarios(text('scenario') ?? 'burst,ceiling,delete,compare'),
    rounds: positiveInteger('rounds', text('rounds') ?? '3'),
    compareQps: positiveInteger('compare-qps', text('compare-qps') ?? '1000'),
    compareBurst: positiveInteger('compare-burst', text('compare-burst') ?? '1000'),
    claims: positiveInteger('claims', claims ?? '1000'),
    nfsOperationsClaims: positiveInteger('claims', claims ?? String(defaultNfsOperationsClaims)),
    upstream: upstream === undefined ? undefined : resolve(cwd, upstream),
    idleSeconds: positiveInteger('idle-seconds', text('idle-seconds') ?? '5'),
    imports: positiveInteger('imports', text('imports') ?? '7'),
    baseline: baseline === undefined ? undefined : resolve(cwd, baseline),
    existingPairs: increasingSizes(text('existing') ?? '10000'),
    out,
    chart: chart === undefined ? out.replace(/(\.json)?$/, '.svg') : resolve(cwd, chart),
    timelineChart: out.replace(/(\.json)?$/, '-timeline.svg'),
    cpuProfileDir: cpuProfileDir === undefined ? undefined : resolve(cwd, cpuProfileDir),
    logDir: logDir === undefined ? undefined : resolve(cwd, logDir),
    provisionerArgs: list(values['provisioner-arg']),
    nodeFlags: list(values['node-flag']),
    ours: oursBuild(text('ours') ?? 'image'),
    volumeDir: volumeDir === undefined ? undefined : resolve(cwd, volumeDir),
    help: values.help === true,
    version: values.version === true,
  };
}

function oursBuild(value: string): OursBuild {
  const build = oursBuilds.find((known) => known === value);
  if (build === undefined) {
    throw new BenchUsageError(`--ours must be ${oursBuilds.join(' or ')}, not ${JSON.stringify(value)}`);
  }
  return build;
}

function list(value: string | boolean | string[] | undefined): string[] {
  return Array.isArray(value) ? value : [];
}

function parseScenarios(list: string): ScenarioName[] {
  const asked = new Set(list.split(',').map((name) => name.trim()));
  if (asked.delete('all')) {
    for (const name of scenarioNames) if (!standaloneScenarios.includes(name)) asked.add(name);
  }
  for (const name of asked) {
    if (!(scenarioNames as readonly string[]).includes(name)) {
      throw new BenchUsageError(
        `unknown scenario ${JSON.stringify(name)}; known: ${scenarioNames.join(', ')}, all`,
      );
    }
  }
  if (asked.has('ceiling') || asked.has('delete')) asked.add('burst');
  if (asked.has('go-defaults')) asked.add('compare');
  return scenarioNames.filter((name) => asked.has(name));
}

function increasingSizes(value: string): number[] {
  const sizes = value.split(',').map((size) => positiveInteger('existing', size.trim()));
  if (sizes.some((size, index) => index > 0 && size <= (sizes[index - 1] as number))) {
    throw new BenchUsageError(`--existing sizes must increase, got ${JSON.stringify(value)}`);
  }
  return sizes;
}

/** `value` of flag `--name` as a positive integer; a {@link BenchUsageError} otherwise. */
export function positiveInteger(name: string, value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1) {
    throw new BenchUsageError(`--${name} must be a positive integer, got ${JSON.stringify(value)}`);
  }
  return Number(value);
}
