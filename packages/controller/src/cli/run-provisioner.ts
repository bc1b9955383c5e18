/**
 * The process around a provisioner: parse the configuration, connect, run a ProvisionController with a
 * health server until SIGTERM/SIGINT, and decide the exit code. The library never exits; this is the
 * one place that sets one:
 * - 0 after a graceful stop (in-flight work finished, Lease released) `--help` or `--version`;
 * - 1 on an unexpected error, or when the controller rejects with a lost Lease (only with
 *   `leaderElection: { onLost: 'reject' }`; by default the controller campaigns again and the
 *   process lives on);
 * - 2 for bad configuration (flags, environment, preflight checks, credentials, controller options),
 *   with the reason on stderr.
 */
import { createKubeApi } from '../client/kube-api.ts';
import type { RateLimit } from '../client/request-limiter.ts';
import type { KubeApi } from '../client/resource-client.ts';
import { isConfigurationError } from '../configuration-error.ts';
import { type Check, HealthServer } from '../http/health-server.ts';
import { isLeaderElectionLostError } from '../leader-election-lost-error.ts';
import type { LeaderElectionOptions } from '../process-options.ts';
import { ProvisionController } from '../provision-controller.ts';
import type { ProvisionControllerOptions } from '../provision-controller-options.ts';
import { createLogger, type LogFields, type Logger, levelForVerbosity } from '../util/logger.ts';
import { errorChainText, errorDetails } from './error-details.ts';
import { type Environment, isUsageError } from './flags.ts';
import type { ProvisionerCliOptions } from './provisioner-flags.ts';

/** An API client the CLI closes when it is done. */
export type CliApi = KubeApi & {
  /** Closes the client's connections. */
  close(): Promise<void>;
};

/**
 * Controller options a program chooses; the CLI supplies the rest from the shared flags, the PV save
 * (`pvSave`, from `--pv-save-strategy`) included.
 */
export type ProgramControllerOptions = Omit<
  ProvisionControllerOptions,
  'api' | 'logger' | 'threadiness' | 'claimLabelSelector' | 'pvSave'
>;

/** What a program runs, built once the API is connected. */
export interface ProvisionerSetup {
  /** The provisioner, its name, and options such as leader election. */
  readonly controller: ProgramControllerOptions;
  /** Port of `/healthz`, `/readyz` and `/metrics`; 0 serves nothing. */
  readonly healthPort: number;
  /** Readiness checks besides the controller's, e.g. that the volume root is mounted. */
  readonly readinessChecks?: Readonly<Record<string, Check>>;
  /** Fields of the start-up log line. */
  readonly logFields?: LogFields;
}

/** One provisioner program. */
export interface ProvisionerProgram<Options extends ProvisionerCliOptions> {
  /** Name in messages, e.g. `kube-hostpath-provisioner`. */
  readonly name: string;
  /** Printed by `--version` and logged at start, e.g. the program's package version. */
  readonly version: string;
  /** Printed for `--help` and after a usage error. */
  readonly usage: string;
  /** Reads the configuration. @throws UsageError for bad flags or environment. */
  parse(argv: readonly string[], env: Environment): Options;
  /** Checks before connecting, e.g. that a mount is there; a rejection is a configuration error. */
  preflight?(options: Options): Promise<void>;
  /** Builds the provisioner on the connected API. */
  setup(options: Options, api: CliApi, logger: Logger): ProvisionerSetup;
}

/** The process {@link runProvisioner} runs in; tests substitute one. */
export interface CliHost {
  /** Arguments after the script. */
  readonly argv: readonly string[];
  readonly env: Environment;
  /** Where `--help` and `--version` go. */
  readonly stdout: {
    /** Writes `text` as it is. */
    write(text: string): unknown;
  };
  /** Where logs and errors go. */
  readonly stderr: {
    /** Writes `text` as it is. */
    write(text: string): unknown;
  };
  /** Calls `listener` on SIGTERM or SIGINT; returns the unsubscribe. */
  onStopSignal(listener: (signal: string) => void): () => void;
  /** Opens the API with `kubeconfig` (in-cluster when `undefined`). @throws for unusable credentials. */
  connect(kubeconfig: string | undefined, rateLimit: RateLimit): CliApi;
  /** Sets the exit code the process ends with (`process.exitCode`). */
  setExitCode(code: number): void;
}

const exitOk = 0;
const exitFailure = 1;
const exitBadConfiguration = 2;

/**
 * Runs `program` in `host` (default: this process) and sets the exit code when it is done; never
 * rejects. Resolves after the graceful stop that a stop signal starts.
 */
export async function runProvisioner<Options extends ProvisionerCliOptions>(
  program: ProvisionerProgram<Options>,
  host: CliHost = processHost(),
): Promise<void> {
  let code: number;
  try {
    code = await run(program, host);
  } catch (err) {
    host.stderr.write(`${program.name}: ${errorChainText(err)}\n`);
    code = exitFailure;
  }
  host.setExitCode(code);
}

async function run<Options extends ProvisionerCliOptions>(
  program: ProvisionerProgram<Options>,
  host: CliHost,
): Promise<number> {
  // Before parsing, so that no required setting or check stands in its way.
  if (host.argv.some((arg) => /^--?version(?:=(?:true|1|t|T|TRUE|True))?$/u.test(arg))) {
    host.stdout.write(`${program.name} ${program.version}\n`);
    return exitOk;
  }
  let options: Options;
  try {
    options = program.parse(host.argv, host.env);
  } catch (err) {
    if (!isUsageError(err)) throw err;
    host.stderr.write(`${program.name}: ${err.message}\n\n${program.usage}\n`);
    return exitBadConfiguration;
  }
  if (options.help) {
    host.stdout.write(`${program.usage}\n`);
    return exitOk;
  }
  const refuse = (err: unknown): number => {
    host.stderr.write(`${program.name}: ${errorChainText(err, false)}\n`);
    return exitBadConfiguration;
  };
  try {
    await program.preflight?.(options);
  } catch (err) {
    return refuse(err);
  }
  let api: CliApi;
  try {
    api = host.connect(options.kubeconfig, options.kubeApiRateLimit);
  } catch (err) {
    return refuse(err);
  }
  try {
    return await serve(program, options, api, host);
  } catch (err) {
    if (isConfigurationError(err)) return refuse(err);
    throw err;
  } finally {
    await api.close();
  }
}

/** Runs the controller and its health server until a stop signal or a lost Lease. */
async function serve<Options extends ProvisionerCliOptions>(
  program: ProvisionerProgram<Options>,
  options: Options,
  api: CliApi,
  host: CliHost,
): Promise<number> {
  // Error fields with their cause chain; formatted only for lines at an enabled level.
  const logger = createLogger({
    level: levelForVerbosity(options.verbosity),
    write: (line) => host.stderr.write(`${line}\n`),
    serializeError: errorDetails,
  });
  for (const warning of options.warnings) logger.warn(warning);
  const setup = program.setup(options, api, logger);
  const controller = new ProvisionController({
    // Events on their own bucket at the flags' rate: raising --kube-api-qps raises both, as one
    // client-go limiter would, so the events keep up with the work they describe.
    eventRateLimit: options.kubeApiRateLimit,
    ...setup.controller,
    api,
    logger,
    threadiness: options.threadiness,
    leaderElection: inNamespace(setup.controller.leaderElection, options.leaderElectionNamespace),
    ...(options.claimLabelSelector === undefined ? {} : { claimLabelSelector: options.claimLabelSelector }),
    pvSave: { strategy: options.pvSaveStrategy },
  });
  const health =
    setup.healthPort === 0
      ? undefined
      : new HealthServer({ port: setup.healthPort, registries: [controller.registry], processMetrics: true });
  if (health !== undefined) {
    controller.registerChecks(health);
    for (const [name, check] of Object.entries(setup.readinessChecks ?? {})) {
      health.addReadinessCheck(name, check);
    }
    await health.listen();
  }

  const stop = new AbortController();
  // The library's timers do not hold the process open; without a health server, a process waiting
  // out a back-off (say, with the API unreachable) would otherwise end with an unsettled await.
  const keepAlive = setInterval(() => {}, 2 ** 30);
  const unsubscribe = host.onStopSignal((signal) => {
    logger.info({ signal }, 'stopping');
    stop.abort();
  });
  logger.info(
    {
      version: program.version,
      node: process.version,
      options: effectiveOptions(options),
      ...setup.logFields,
    },
    `starting ${program.name}`,
  );
  try {
    await controller.run(stop.signal);
    return exitOk;
  } catch (err) {
    if (!isLeaderElectionLostError(err)) throw err;
    logger.error({ err }, 'leader election lost; exiting');
    return exitFailure;
  } finally {
    clearInterval(keepAlive);
    unsubscribe();
    await health?.close();
  }
}

/** The settings the program runs with, without the one-shot switches. */
function effectiveOptions(options: ProvisionerCliOptions): Record<string, unknown> {
  const { help: _help, warnings: _warnings, ...effective } = options;
  return effective;
}

/** Credentials from a kubeconfig file, or in-cluster. */
function connectKubeApi(kubeconfig: string | undefined, rateLimit: RateLimit): CliApi {
  return createKubeApi(kubeconfig === undefined ? 'in-cluster' : { kubeconfig }, { rateLimit });
}

function processHost(): CliHost {
  const signals = ['SIGTERM', 'SIGINT'] as const;
  return {
    argv: process.argv.slice(2),
    env: process.env,
    stdout: process.stdout,
    stderr: process.stderr,
    onStopSignal(listener) {
      for (const signal of signals) process.once(signal, listener);
      return () => {
        for (const signal of signals) process.off(signal, listener);
      };
    },
    connect: connectKubeApi,
    setExitCode(code) {
      process.exitCode = code;
    },
  };
}

/** The program's leader election (default on) with the Lease in `namespace` when the flags name one. */
function inNamespace(
  election: boolean | LeaderElectionOptions = true,
  namespace: string | undefined,
): boolean | LeaderElectionOptions {
  if (namespace === undefined || election === false) return election;
  return { ...(election === true ? {} : election), namespace };
}
