/**
 * `kube-testenv prepare`: everything the test suites would otherwise build on first use, built or
 * verified in its cache before the first suite runs (`npm test` runs it), so no test's timeout ever
 * includes a build. Each step is cached, so a warm run only checks. A step this machine cannot do is
 * skipped with one line saying why (its tests skip the same way), except with `CI=true`, where the
 * machine is supposed to do everything and nothing is built before the run fails.
 */
import { ensureBinaries } from './binaries.ts';
import { formatDuration } from './duration.ts';
import { ensureGuestImage } from './guest/guest-image.ts';
import {
  GuestToolsMissingError,
  guestUnsupportedReason,
  missingGuestPackages,
} from './guest/guest-prerequisites.ts';
import { helmBinary } from './helm.ts';
import { baseImage, ensureBaseImage } from './images/base-image.ts';
import { arm64EmulationUnavailableReason, ensureArm64Emulation } from './images/emulation.ts';
import { ensureProjectImage, projectImages } from './images/project-images.ts';
import { ensureNodeBinaries } from './node/node-binaries.ts';
import { ensurePauseArchive } from './node/node-images.ts';
import { findExecutable, realNodeUnavailableReason } from './node/node-preflight.ts';
import { pinnedVersions } from './versions.ts';

type Log = (message: string) => void;

/** One thing the suites need built. */
export interface PrepareStep {
  /** What the progress lines call it. */
  readonly name: string;
  /** Why this machine cannot do it (nor run its tests), or `undefined` when it can. */
  readonly unavailable: () => string | undefined;
  /** Builds or verifies it; resolves with where it is, for the step's closing line. */
  readonly run: (log: Log) => Promise<string>;
}

/** What `npm test` needs, in the order it is built: the Go builds share Go's caches in this order. */
export const prepareSteps: readonly PrepareStep[] = [
  {
    name: `control plane (etcd ${pinnedVersions.etcd}, Kubernetes ${pinnedVersions.kubernetes})`,
    unavailable: () => undefined,
    run: async (log) => (await ensureBinaries({ onProgress: log })).dir,
  },
  {
    name: 'helm',
    unavailable: () => undefined,
    run: (log) => helmBinary({ onProgress: log }),
  },
  {
    name: "real node's binaries and pause image",
    unavailable: realNodeUnavailableReason,
    run: async (log) => {
      const binaries = await ensureNodeBinaries({ onProgress: log });
      await ensurePauseArchive(binaries);
      return binaries.dir;
    },
  },
  {
    name: 'test images and their base',
    unavailable: () =>
      findExecutable('podman') === undefined
        ? 'the images need podman (apt-get install podman runc)'
        : undefined,
    run: async (log) => {
      await ensureBaseImage({ onProgress: log });
      // Rebuilt only when their inputs changed (image-inputs.ts): the tests take what podman holds.
      for (const image of projectImages) await ensureProjectImage(image, { onProgress: log });
      return [baseImage, ...projectImages.map((image) => `${image.tag} (amd64, arm64)`)].join(', ');
    },
  },
  {
    name: 'arm64 emulation (qemu-user-static in binfmt_misc)',
    unavailable: arm64EmulationUnavailableReason,
    run: async () => {
      await ensureArm64Emulation();
      return '/proc/sys/fs/binfmt_misc/qemu-aarch64';
    },
  },
  {
    name: "guest's kernel and root image",
    unavailable: () => {
      const unsupported = guestUnsupportedReason();
      if (unsupported !== undefined) return unsupported;
      const missing = missingGuestPackages();
      return missing.length > 0 ? new GuestToolsMissingError(missing).message : undefined;
    },
    run: async (log) => (await ensureGuestImage({ onProgress: log })).dir,
  },
];

/** Options of {@link prepare}. */
export interface PrepareOptions {
  /** Receives the progress lines. */
  readonly log: Log;
  /** `CI=true` turns a step this machine cannot do into a failure. Defaults to `process.env`. */
  readonly env?: NodeJS.ProcessEnv;
}

/**
 * Runs `steps` in order, each with a line when it starts and one with its time when it is ready;
 * resolves with the exit status: 0, or 1 when a step failed (the later ones do not run) or, with
 * `CI=true`, when one cannot run here (then none runs).
 */
export async function prepare(steps: readonly PrepareStep[], options: PrepareOptions): Promise<number> {
  const { log } = options;
  const started = Date.now();
  const unavailable = steps.map((step) => step.unavailable());
  if ((options.env ?? process.env).CI === 'true' && unavailable.some((reason) => reason !== undefined)) {
    for (const [i, step] of steps.entries()) {
      const reason = unavailable[i];
      if (reason !== undefined) log(`prepare: cannot build the ${step.name}: ${reason}`);
    }
    log('prepare: with CI=true this machine must run every test; nothing was built');
    return 1;
  }
  let skipped = 0;
  for (const [i, step] of steps.entries()) {
    const prefix = `prepare [${i + 1}/${steps.length}]`;
    const reason = unavailable[i];
    if (reason !== undefined) {
      log(`${prefix} skipped the ${step.name}, and its tests will skip: ${reason}`);
      skipped++;
      continue;
    }
    const stepStarted = Date.now();
    log(`${prefix} ${step.name}`);
    try {
      const where = await step.run(log);
      log(`${prefix} ${step.name} ready in ${formatDuration(Date.now() - stepStarted)}: ${where}`);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      log(`${prefix} ${step.name} failed after ${formatDuration(Date.now() - stepStarted)}: ${message}`);
      return 1;
    }
  }
  const note = skipped > 0 ? ` (${skipped} skipped)` : '';
  log(`prepare: ready in ${formatDuration(Date.now() - started)}${note}`);
  return 0;
}
