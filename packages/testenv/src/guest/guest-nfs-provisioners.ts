/**
 * NFS provisioners under test inside the guest, on a kernel NFS mount of a test export, the way
 * their pod runs under kubelet: the bundled CLI (the image's app layer) runs with the guest's
 * Node.js, `--mount-root` is a `mount -t nfs4` of the export, `NFS_SERVER` is the address the guest
 * reaches the export at, and the API server is the host's, under the deployment's RBAC.
 */
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join, posix } from 'node:path';
import type { V1PersistentVolume } from '@kubernetes/client-node';
import { runCommand } from '../command.ts';
import { bundleProgram } from '../images/bundle.ts';
import { exportEntries, useNfsHarness } from '../nfs-provisioners-harness.ts';
import { type NfsServer, type StartNfsServerOptions, startNfsServer } from '../nfs-server.ts';
import { nfsToolsAvailable } from '../nfs-tools.ts';
import type { TestEnv } from '../test-env.ts';
import type { Guest, GuestNfsEndpoint, StartGuestOptions } from './guest.ts';
import { defaultNfsMountOptions, type GuestNfsMount, mountNfs } from './guest-nfs-mount.ts';
import type { GuestProgram } from './guest-programs.ts';
import { guestAvailable, useGuest } from './use-guest.ts';

/**
 * Lease timings for a provisioner in the guest: its requests cross a forwarder in a one-CPU User-Mode
 * Linux, which a loaded host slows down for seconds at a time; these tests are about the kernel's
 * semantics, not about how fast a lapsed leader steps down.
 */
export const guestLeaseFlags: readonly string[] = [
  '--leader-election-lease-duration=60s',
  '--leader-election-renew-deadline=45s',
  '--leader-election-retry-period=5s',
];

/** Options of {@link useGuestNfsProvisioners}. */
export interface GuestNfsProvisionersOptions {
  /**
   * The guest, e.g. from `useGuest()`, or how to boot one: by default the harness boots the file's
   * own guest ({@link GuestNfsProvisioners.guest}), as `useGuest` would.
   */
  readonly guest?: (() => Promise<Guest>) | StartGuestOptions;
  /** Source of the provisioner CLI, e.g. `packages/nfs-subdir/src/cli.ts`; bundled once per file. */
  readonly entry: string;
  /** A kustomization whose RBAC the provisioners run under (see `deploymentAccount`). */
  readonly deployDir: string;
  /** Prefix of the provisioner and StorageClass names. */
  readonly prefix: string;
  /** Output lines that may mention a denial, because the RBAC deliberately does not grant it. */
  readonly expectedDenials?: RegExp;
}

/** Options of {@link GuestNfsProvisioners.deploy}. */
export interface GuestNfsDeployOptions {
  /** The server's NFSv4 path of the export; default `/export`. */
  readonly exportPath?: string;
  /** `NFS_PATH` as the deployment spells it; default `exportPath`. */
  readonly nfsPath?: string;
  /** Export options (`squash`, `readOnly`). */
  readonly server?: Pick<StartNfsServerOptions, 'squash' | 'readOnly'>;
  /** Mode of the exported directory, owned by root; default `0o755`, as an export usually is. */
  readonly exportMode?: number;
  /**
   * Export a file system of this size (a tmpfs mounted on the host) instead of a directory of the
   * host's, for tests that fill it.
   */
  readonly exportSizeMiB?: number;
  /** Options of the provisioner's mount; default `vers=4.1`. */
  readonly mountOptions?: string;
  /** More environment for the provisioner, e.g. `DELETE_UNRECORDED_NESTED`. */
  readonly env?: Readonly<Record<string, string>>;
}

/** A provisioner running in the guest on a kernel mount of its own export. */
export interface GuestNfsDeployment {
  readonly provisionerName: string;
  /** The test NFS server (replaced by {@link GuestNfsDeployment.startServer}). */
  readonly server: NfsServer;
  /** The exported directory on the host's disk; it outlives server restarts. */
  readonly exportDir: string;
  /** How the guest reaches the export; PVs name its address. */
  readonly endpoint: GuestNfsEndpoint;
  /** The provisioner's mount of the export inside the guest (its `--mount-root`). */
  readonly mount: GuestNfsMount;
  readonly program: GuestProgram;
  /** Stops the NFS server (the export's data stays); the guest's mounts wait for it to return. */
  stopServer(): Promise<void>;
  /** Starts the NFS server again on the same export (a new process: its client state is gone). */
  startServer(): Promise<void>;
  /** Stops the provisioner gracefully, unmounts, stops the server; resolves with the exit code. */
  stop(): Promise<number | null>;
}

/** NFS provisioners of one test file running in the guest. */
export interface GuestNfsProvisioners {
  /** The guest they run in: booted on first use, powered off after the file's tests. */
  readonly guest: () => Promise<Guest>;
  /**
   * Whether they can run here (the guest and the NFS tools), for `describe.skipIf(!….available())`;
   * false with a warning saying what is missing, or throws in CI (see `guestAvailable`,
   * `nfsToolsAvailable`).
   */
  available(): boolean;
  /** Starts a ganesha export, mounts it in the guest and starts a provisioner (unique name) on it. */
  deploy(options?: GuestNfsDeployOptions): Promise<GuestNfsDeployment>;
  /** Creates a StorageClass (reclaim policy Delete) for `deployment`; resolves with its name. */
  storageClass(deployment: GuestNfsDeployment, parameters?: Record<string, string>): Promise<string>;
  /** Sorted entries of a directory of the export on disk, without dot files; empty if it is missing. */
  entries(deployment: GuestNfsDeployment, relative?: string): Promise<string[]>;
  /**
   * Mounts the PV's `server:path` in the guest as kubelet would for a pod; the caller unmounts.
   * Rejects when the PV names another server or a path outside the export.
   */
  mountVolume(deployment: GuestNfsDeployment, pv: V1PersistentVolume): Promise<GuestNfsMount>;
  /**
   * Writes `probe.txt` through a kernel mount of the PV and checks it landed in the volume's
   * directory on the export's disk; resolves with that directory relative to the export.
   */
  reachVolume(deployment: GuestNfsDeployment, pv: V1PersistentVolume): Promise<string>;
}

function volumeDirectory(deployment: GuestNfsDeployment, pv: V1PersistentVolume): string {
  const nfs = pv.spec?.nfs;
  if (nfs?.server !== deployment.endpoint.address) {
    throw new Error(
      `PV ${pv.metadata?.name} names server ${nfs?.server}, not ${deployment.endpoint.address}`,
    );
  }
  const relative = posix.relative(deployment.endpoint.exportPath, nfs.path);
  if (relative === '' || relative.startsWith('..')) {
    throw new Error(
      `PV ${pv.metadata?.name} path ${nfs.path} is not below the export ${deployment.endpoint.exportPath}`,
    );
  }
  return relative;
}

/**
 * Runs NFS provisioners in the guest under a deployment's RBAC. Call once per file, outside tests.
 * After the file's tests every deployment is stopped; the file fails if a provisioner exited
 * non-zero or logged a denial other than {@link GuestNfsProvisionersOptions.expectedDenials}.
 */
export function useGuestNfsProvisioners(
  env: TestEnv,
  options: GuestNfsProvisionersOptions,
): GuestNfsProvisioners {
  // Registered first, so that its `afterAll` powers the guest off after the harness's has stopped
  // the provisioners (vitest runs a file's `afterAll` hooks last-registered first).
  const guestOf = typeof options.guest === 'function' ? options.guest : useGuest(options.guest);
  const harness = useNfsHarness<GuestNfsDeployment>(env, options);
  let bundle: Promise<string> | undefined;
  let count = 0;

  const bundled = async (guest: Guest): Promise<string> => {
    bundle ??= (async () => {
      const outfile = join(guest.shareDir, 'bin', `${basename(options.entry, '.ts')}-${options.prefix}.mjs`);
      await bundleProgram({ entry: options.entry, outfile });
      return guest.guestPath(outfile);
    })();
    return bundle;
  };

  const provisioners: GuestNfsProvisioners = {
    guest: guestOf,
    available: () => nfsToolsAvailable() && guestAvailable(),
    async deploy(deployOptions = {}) {
      const guest = await guestOf();
      const [{ kubeconfigPath, namespace }, program] = await Promise.all([
        harness.credentials(),
        bundled(guest),
      ]);
      const kubeconfig = await guest.kubeconfig(kubeconfigPath);
      const exportPath = deployOptions.exportPath ?? '/export';
      const exportDir = await mkdtemp(join(tmpdir(), 'guest-export-'));
      const serverOptions = { ...deployOptions.server, exportPath, exportDir };
      const undo: Array<() => Promise<unknown>> = [() => rm(exportDir, { recursive: true, force: true })];
      const mode = (deployOptions.exportMode ?? 0o755).toString(8);
      if (deployOptions.exportSizeMiB !== undefined) {
        await runCommand('mount', [
          '-t',
          'tmpfs',
          '-o',
          `size=${deployOptions.exportSizeMiB}m,mode=${mode}`,
          'tmpfs',
          exportDir,
        ]);
        undo.push(() => runCommand('umount', [exportDir]));
      } else await chmod(exportDir, Number.parseInt(mode, 8));
      let server: NfsServer;
      let endpoint: GuestNfsEndpoint;
      let mount: GuestNfsMount;
      let running: GuestProgram;
      const provisionerName = harness.provisionerName();
      try {
        server = await startNfsServer(serverOptions);
        undo.push(() => server.stop());
        endpoint = await guest.exposeNfsServer(server);
        undo.push(() => endpoint.cut());
        mount = await mountNfs(
          guest,
          { server: endpoint.address, path: exportPath },
          `/mnt/export-${++count}`,
          deployOptions.mountOptions ?? defaultNfsMountOptions,
        );
        undo.push(() => mount.unmount(true));
        running = await guest.spawn(['node', program, '--mount-root', mount.mountPoint, ...guestLeaseFlags], {
          env: {
            NFS_SERVER: endpoint.address,
            NFS_PATH: deployOptions.nfsPath ?? exportPath,
            PROVISIONER_NAME: provisionerName,
            POD_NAMESPACE: namespace,
            KUBECONFIG: kubeconfig,
            METRICS_PORT: '0',
            ...deployOptions.env,
          },
        });
      } catch (err) {
        for (const step of undo.reverse()) await step().catch(() => undefined);
        throw err;
      }
      let serverRunning = true;
      const deployment: GuestNfsDeployment = {
        provisionerName,
        get server() {
          return server;
        },
        exportDir,
        endpoint,
        mount,
        program: running,
        async stopServer() {
          if (!serverRunning) return;
          serverRunning = false;
          await server.stop();
        },
        async startServer() {
          if (serverRunning) return;
          server = await startNfsServer(serverOptions);
          serverRunning = true;
          await endpoint.retarget(server.port);
        },
        async stop() {
          const code = await running.stop();
          await deployment.startServer();
          await mount.unmount().catch(() => mount.unmount(true));
          await endpoint.cut();
          await server.stop();
          if (deployOptions.exportSizeMiB !== undefined) await runCommand('umount', [exportDir]);
          await rm(exportDir, { recursive: true, force: true });
          return code;
        },
      };
      return harness.track(deployment);
    },
    storageClass: harness.storageClass,
    entries: (deployment, relative) => exportEntries(deployment.exportDir, relative),
    async mountVolume(deployment, pv) {
      volumeDirectory(deployment, pv);
      const guest = await guestOf();
      const nfs = pv.spec?.nfs;
      return mountNfs(guest, { server: nfs?.server ?? '', path: nfs?.path ?? '' });
    },
    async reachVolume(deployment, pv) {
      const relative = volumeDirectory(deployment, pv);
      const guest = await guestOf();
      const mount = await provisioners.mountVolume(deployment, pv);
      const content = `probe for ${pv.metadata?.name}\n`;
      try {
        const written = await guest.run([
          'sh',
          '-ec',
          'printf %s "$1" > "$2/probe.txt"',
          'probe',
          content,
          mount.mountPoint,
        ]);
        if (written.status !== 0)
          throw new Error(`writing through ${mount.source} failed: ${written.stderr}`);
      } finally {
        await mount.unmount();
      }
      const onDisk = await readFile(join(deployment.exportDir, relative, 'probe.txt'), 'utf8').catch(
        () => undefined,
      );
      if (onDisk !== content) {
        throw new Error(
          `a file written through a kernel mount of ${mount.source} did not land in ${relative}`,
        );
      }
      return relative;
    },
  };
  return provisioners;
}
