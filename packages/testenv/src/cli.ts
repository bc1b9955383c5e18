#!/usr/bin/env node
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ensureBinaries } from './binaries.ts';
import { attachControlPlane, type ControlPlane, startControlPlane } from './control-plane.ts';
import { testenvEnvironment } from './environment.ts';
import { guestExecCommand, guestImageCommand } from './guest/guest-commands.ts';
import { helmBinary } from './helm.ts';
import { bundleCommand, imageBaseCommand, imagesCommand } from './images/image-commands.ts';
import { ensureRealNode, nodeBuildCommand, realNodeStatus } from './node/node-commands.ts';
import { prepare, prepareSteps } from './prepare.ts';
import { componentNames } from './state-dir.ts';
import { version } from './version.ts';

const usage = `Usage: kube-testenv <command> [--dir <state dir>]

Commands:
  up        start a control plane that keeps running; prints shell exports (eval "$(kube-testenv up)")
            With --node, also a real node (kubelet and containerd; root): see "A real node" in the README
  down      stop it and delete etcd's data
  status    show its components; exit status 1 when kube-apiserver is not running
  env       print the shell exports of the running control plane
  exec -- <command...>
            start a control plane, run the command with TESTENV_KUBECONFIG, TESTENV_DIR, KUBECONFIG
            and PATH (kubectl) set, stop it, and exit with the command's status. With
            TESTENV_KUBECONFIG already set, only runs the command. With --node, a real node runs
            beside the control plane for the command's tests to share (or one line says why not).
  build     build or verify the cached binaries and print their directory
  helm-path build or verify the cached helm (for chart tests) and print its path
  image-base
            make the local Node 24 base image (localhost/node:24-local) present: built with
            mmdebstrap and cached under $XDG_CACHE_HOME/kube-provisioner/images; needs podman
  images    build the base if missing, then the project's images; print their sizes
  node-build
            build or verify a real node's cached binaries (kubelet, containerd, CNI plugins) and
            pause image; print their directory
  bundle <entry.ts> <out.mjs>
            bundle a CLI and its run-time dependencies into one ES module (an image's app layer)
  guest-image
            build or verify the test guest's cached kernel and root image (User-Mode Linux from
            apt, mmdebstrap; root) and print their directory
  prepare   build or verify, in order, all the tests need: build, helm-path, node-build, images and
            guest-image, each with its time; one this machine cannot do is skipped with one line
            saying why (with CI=true, it fails). npm test runs it before the first suite
  guest-exec -- <command...>
            boot a test guest, run the command in it as root, print its output, power it off and
            exit with the command's status

--dir defaults to $TESTENV_DIR, else ./.testenv. --version prints the version, --help this text.
`;

const log = (message: string): void => {
  process.stderr.write(`kube-testenv: ${message}\n`);
};

function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

function exportLines(controlPlane: ControlPlane): string {
  const { PATH: _path, ...variables } = testenvEnvironment(controlPlane);
  const lines = Object.entries(variables).map(([name, value]) => `export ${name}=${shellQuote(value)}`);
  lines.push(`export PATH=${shellQuote(controlPlane.binDir)}:"$PATH"`);
  return `${lines.join('\n')}\n`;
}

async function attachRunning(dir: string): Promise<ControlPlane | undefined> {
  const controlPlane = await attachControlPlane(dir).catch(() => undefined);
  if (!controlPlane) return undefined;
  return (await controlPlane.processes())['kube-apiserver'] === undefined ? undefined : controlPlane;
}

/** Runs `command` with `env`, forwarding termination signals, and resolves with its exit status. */
function runChild(command: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  const [file, ...args] = command;
  if (!file) return Promise.resolve(2);
  const child = spawn(file, args, { stdio: 'inherit', env });
  const forward = (signal: NodeJS.Signals): void => {
    child.kill(signal);
  };
  process.on('SIGINT', forward);
  process.on('SIGTERM', forward);
  return new Promise((done) => {
    child.on('error', (err) => {
      log(`cannot run ${file}: ${err.message}`);
      done(127);
    });
    child.on('close', (code, signal) => {
      process.off('SIGINT', forward);
      process.off('SIGTERM', forward);
      done(code ?? 128 + (signal === 'SIGKILL' ? 9 : signal === 'SIGINT' ? 2 : 15));
    });
  });
}

async function exec(dir: string, command: readonly string[], node = false): Promise<number> {
  if (command.length === 0) {
    log('exec needs a command after --');
    return 2;
  }
  if (process.env.TESTENV_KUBECONFIG) {
    log(`using the existing cluster of TESTENV_KUBECONFIG=${process.env.TESTENV_KUBECONFIG}`);
    return runChild(command, process.env);
  }
  const controlPlane = await startControlPlane({ dir, onProgress: log });
  try {
    if (node) await ensureRealNode(controlPlane, { stopOnExit: true, log });
    return await runChild(command, { ...process.env, ...testenvEnvironment(controlPlane) });
  } finally {
    await controlPlane.stop();
    log('control plane stopped');
  }
}

/** Runs the CLI with the arguments after the program name and resolves with the exit status. */
export async function main(argv: readonly string[]): Promise<number> {
  const separator = argv.indexOf('--');
  const own = separator === -1 ? argv : argv.slice(0, separator);
  const command = separator === -1 ? [] : argv.slice(separator + 1);
  let parsed: ReturnType<typeof parseOwn>;
  try {
    parsed = parseOwn(own);
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n\n${usage}`);
    return 2;
  }
  const { subcommand, dir, operands, node } = parsed;
  switch (subcommand) {
    case 'up': {
      const controlPlane =
        (await attachRunning(dir)) ?? (await startControlPlane({ dir, stopOnExit: false, onProgress: log }));
      if (node) await ensureRealNode(controlPlane, { stopOnExit: false, log });
      process.stdout.write(exportLines(controlPlane));
      return 0;
    }
    case 'down': {
      const controlPlane = await attachControlPlane(dir).catch(() => undefined);
      if (!controlPlane) {
        log(`no control plane in ${dir}`);
        return 0;
      }
      await controlPlane.stop();
      log(`stopped the control plane in ${dir}`);
      return 0;
    }
    case 'status': {
      const controlPlane = await attachControlPlane(dir).catch(() => undefined);
      if (!controlPlane) {
        process.stdout.write(`no control plane in ${dir}\n`);
        return 1;
      }
      const processes = await controlPlane.processes();
      process.stdout.write(`Kubernetes ${controlPlane.kubernetesVersion}, state in ${controlPlane.dir}\n`);
      for (const name of componentNames) {
        const pid = processes[name];
        process.stdout.write(
          `${name.padEnd(24)} ${pid === undefined ? 'stopped' : `running (pid ${pid})`}\n`,
        );
      }
      process.stdout.write(await realNodeStatus(dir));
      return processes['kube-apiserver'] === undefined ? 1 : 0;
    }
    case 'env': {
      const controlPlane = await attachRunning(dir);
      if (!controlPlane) {
        log(`no running control plane in ${dir}; start one with \`kube-testenv up\``);
        return 1;
      }
      process.stdout.write(exportLines(controlPlane));
      return 0;
    }
    case 'exec':
      return exec(dir, command, node);
    case 'node-build':
      return nodeBuildCommand(log);
    case 'build': {
      const binaries = await ensureBinaries({ onProgress: log });
      process.stdout.write(`${binaries.dir}\n`);
      return 0;
    }
    case 'helm-path':
      process.stdout.write(`${await helmBinary({ onProgress: log })}\n`);
      return 0;
    case 'image-base':
      return imageBaseCommand(log);
    case 'images':
      return imagesCommand(log);
    case 'bundle':
      return bundleCommand(operands, log);
    case 'guest-image':
      return guestImageCommand(log);
    case 'guest-exec':
      return guestExecCommand(command, log);
    case 'prepare':
      return prepare(prepareSteps, { log });
    case 'help':
      process.stdout.write(usage);
      return 0;
    case 'version':
      process.stdout.write(`kube-testenv ${version}\n`);
      return 0;
    default:
      process.stderr.write(usage);
      return 2;
  }
}

function parseOwn(argv: readonly string[]): {
  subcommand: string | undefined;
  dir: string;
  operands: readonly string[];
  node: boolean;
} {
  const { values, positionals } = parseArgs({
    args: [...argv],
    options: {
      dir: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
      version: { type: 'boolean' },
      node: { type: 'boolean' },
    },
    allowPositionals: true,
  });
  const [subcommand, ...operands] = positionals;
  if (operands.length > 0 && subcommand !== 'bundle') {
    throw new Error(`unexpected arguments: ${operands.join(' ')}`);
  }
  return {
    subcommand: values.help ? 'help' : values.version ? 'version' : subcommand,
    operands,
    dir: resolve(values.dir ?? process.env.TESTENV_DIR ?? '.testenv'),
    node: values.node === true,
  };
}

if (import.meta.main) {
  main(process.argv.slice(2)).then(
    (status) => {
      process.exitCode = status;
    },
    (err: unknown) => {
      log(err instanceof Error ? err.message : String(err));
      process.exitCode = 1;
    },
  );
}
