import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { type FlagSpecs, parseFlags, usageText } from '../src/cli/flags.ts';
import {
  type ProvisionerCliOptions,
  provisionerFlags,
  readProvisionerFlags,
} from '../src/cli/provisioner-flags.ts';
import {
  type CliApi,
  type CliHost,
  type ProvisionerProgram,
  type ProvisionerSetup,
  runProvisioner,
} from '../src/cli/run-provisioner.ts';
import type { RateLimit } from '../src/client/request-limiter.ts';
import { resources } from '../src/client/resource-client.ts';
import { FakeKubeApi } from '../src/testing/fake-api.ts';
import { ManualClock } from '../src/testing/manual-clock.ts';
import { eventually, newClaim, newStorageClass, pump, RecordingProvisioner } from './controller-fixtures.ts';

/** A process double: records output, the exit code and the API it hands out. */
class FakeHost implements CliHost {
  readonly argv: readonly string[];
  env: Readonly<Record<string, string | undefined>> = {};
  readonly api: FakeKubeApi;
  out = '';
  err = '';
  exitCode: number | undefined;
  connected: { kubeconfig: string | undefined; rateLimit: RateLimit } | undefined;
  /** The limits of the clients made with their own limiter (`withRateLimit`), in order. */
  readonly ownLimits: RateLimit[] = [];
  closed = false;
  stopListener: ((signal: string) => void) | undefined;
  readonly stdout = { write: (text: string) => (this.out += text) };
  readonly stderr = { write: (text: string) => (this.err += text) };
  connectError: Error | undefined;

  constructor(argv: readonly string[], api: FakeKubeApi = new FakeKubeApi()) {
    this.argv = argv;
    this.api = api;
  }

  onStopSignal(listener: (signal: string) => void): () => void {
    this.stopListener = listener;
    return () => {
      this.stopListener = undefined;
    };
  }

  connect(kubeconfig: string | undefined, rateLimit: RateLimit): CliApi {
    if (this.connectError !== undefined) throw this.connectError;
    this.connected = { kubeconfig, rateLimit };
    const { api, ownLimits } = this;
    // Like the real client, it can make a client with a limiter of its own.
    const client: CliApi & { withRateLimit(limit: RateLimit): CliApi } = {
      resource: (descriptor) => api.resource(descriptor),
      withRateLimit: (limit) => {
        ownLimits.push(limit);
        return client;
      },
      close: async () => {
        this.closed = true;
      },
    };
    return client;
  }

  setExitCode(code: number): void {
    this.exitCode = code;
  }
}

const flags = {
  name: { env: 'NAME', default: 'example.com/test', description: 'provisioner name' },
  'health-port': { default: '0', description: 'probe port' },
  ...provisionerFlags,
} satisfies FlagSpecs;

interface TestOptions extends ProvisionerCliOptions {
  readonly name: string;
  readonly healthPort: number;
}

function program(
  setup: (options: TestOptions) => Partial<ProvisionerSetup> = () => ({}),
  preflight?: () => Promise<void>,
): ProvisionerProgram<TestOptions> {
  return {
    name: 'test-provisioner',
    version: '1.2.3',
    usage: usageText('test-provisioner', flags),
    parse(argv, env) {
      const parsed = parseFlags(flags, argv, env);
      return {
        name: parsed.required('name'),
        healthPort: parsed.integer('health-port', 0, 65535),
        ...readProvisionerFlags(parsed),
      };
    },
    ...(preflight === undefined ? {} : { preflight }),
    setup: (options) => ({
      controller: {
        provisionerName: options.name,
        provisioner: new RecordingProvisioner(),
        leaderElection: false,
      },
      healthPort: options.healthPort,
      ...setup(options),
    }),
  };
}

async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('runProvisioner', () => {
  it('exits 2 on a usage error, printing the reason and the help text, without connecting', async () => {
    const host = new FakeHost(['--threadiness', 'many']);
    await runProvisioner(program(), host);
    expect(host.exitCode).toBe(2);
    expect(host.err).toContain(
      'test-provisioner: --threadiness must be an integer from 1 to 1000, got "many"',
    );
    expect(host.err).toContain('Usage: test-provisioner [flags]');
    expect(host.connected).toBeUndefined();
  });

  it('prints the help text on stdout and exits 0', async () => {
    const host = new FakeHost(['--help']);
    await runProvisioner(program(), host);
    expect(host.exitCode).toBe(0);
    expect(host.out).toContain('--claim-label-selector <value>');
    expect(host.connected).toBeUndefined();
  });

  it('exits 2 with the reason when a preflight check fails', async () => {
    const host = new FakeHost([]);
    await runProvisioner(
      program(undefined, async () => {
        throw new Error('mount root /export is not a directory');
      }),
      host,
    );
    expect(host.exitCode).toBe(2);
    expect(host.err).toBe('test-provisioner: mount root /export is not a directory\n');
  });

  it('exits 2 when the credentials cannot be loaded', async () => {
    const host = new FakeHost(['--kubeconfig', '/missing']);
    host.connectError = new Error("ENOENT: no such file or directory, open '/missing'");
    await runProvisioner(program(), host);
    expect(host.exitCode).toBe(2);
    expect(host.err).toContain('/missing');
  });

  it('exits 2 when the controller refuses its options, and closes the API', async () => {
    const host = new FakeHost(['--name', 'example.com/test']);
    await runProvisioner(
      program(() => ({ controller: { provisionerName: '', provisioner: new RecordingProvisioner() } })),
      host,
    );
    expect(host.exitCode).toBe(2);
    expect(host.err).toContain('provisionerName must be a non-empty string');
    expect(host.closed).toBe(true);
  });

  it('exits 1 with the stack of an unexpected error', async () => {
    const host = new FakeHost([]);
    await runProvisioner(
      {
        ...program(),
        parse: () => {
          throw new TypeError('bug in parse');
        },
      },
      host,
    );
    expect(host.exitCode).toBe(1);
    expect(host.err).toMatch(/^test-provisioner: TypeError: bug in parse\n {4}at /u);
  });

  it('connects with the API rate limit and passes the claim selector and threadiness to the controller', async () => {
    const host = new FakeHost([
      '--kubeconfig=/k/config',
      '--kube-api-qps=50',
      '--kube-api-burst=80',
      '--claim-label-selector=tier=db',
      '--threadiness=2',
    ]);
    const done = runProvisioner(program(), host);
    const claimList = () =>
      host.api
        .actions()
        .find((action) => action.verb === 'list' && action.resource === 'persistentvolumeclaims');
    const list = await eventually(() => {
      const action = claimList();
      if (action === undefined) throw new Error('claims not listed yet');
      return action;
    });
    expect(host.connected).toEqual({ kubeconfig: '/k/config', rateLimit: { qps: 50, burst: 80 } });
    // The events get a client of their own at the same rate, so raising the flags raises both.
    expect(host.ownLimits).toContainEqual({ qps: 50, burst: 80 });
    expect(list.options).toMatchObject({ labelSelector: 'tier=db' });
    host.stopListener?.('SIGTERM');
    await done;
    expect(host.exitCode).toBe(0);
  });

  it("serves /readyz with the controller's and the program's checks, and stops gracefully on a signal", async () => {
    const port = await freePort();
    const host = new FakeHost(['--health-port', String(port)]);
    let rootMounted = true;
    const done = runProvisioner(
      program(() => ({
        readinessChecks: {
          root: () => {
            if (!rootMounted) throw new Error('root is gone');
          },
        },
      })),
      host,
    );
    const readyz = async (): Promise<{ status: number; body: string }> => {
      const response = await fetch(`http://127.0.0.1:${port}/readyz`);
      return { status: response.status, body: await response.text() };
    };
    const ready = await eventually(async () => {
      const result = await readyz();
      expect(result.status).toBe(200);
      return result;
    });
    expect(ready.body).toContain('[+]provision-controller ok');
    expect(ready.body).toContain('[+]root ok');
    rootMounted = false;
    expect(await readyz()).toMatchObject({
      status: 500,
      body: expect.stringContaining('[-]root failed: root is gone'),
    });

    host.stopListener?.('SIGTERM');
    await done;
    expect(host.exitCode).toBe(0);
    expect(host.err).toContain('"msg":"stopping"');
    expect(host.stopListener).toBeUndefined();
    expect(host.closed).toBe(true);
    await expect(fetch(`http://127.0.0.1:${port}/readyz`)).rejects.toThrow();
  });

  it('lives on when the leader Lease is lost: stops the work, campaigns again, exits 0 on SIGTERM', async () => {
    const clock = new ManualClock(1_700_000_000_000);
    const api = new FakeKubeApi({ clock });
    const host = new FakeHost(['--leader-election-namespace', 'kube-system'], api);
    const done = runProvisioner(
      program((options) => ({
        controller: {
          provisionerName: options.name,
          provisioner: new RecordingProvisioner(),
          leaderElection: true,
          clock,
        },
      })),
      host,
    );
    const advance = (ms: number): Promise<void> => pump(clock, ms, 500);
    await advance(2_000);
    const removes = (['get', 'update'] as const).map((verb) =>
      api.prependReactor({ resource: 'leases', verb }, () => {
        throw new Error('api down');
      }),
    );
    await advance(20_000);
    expect(host.err).toContain('Lost the lease; stopped all work, campaigning again');
    expect(host.exitCode).toBeUndefined();
    for (const remove of removes) remove();
    await advance(5_000);
    expect(host.err.match(/Successfully acquired lease/gu)).toHaveLength(2);
    host.stopListener?.('SIGTERM');
    await advance(2_000);
    await done;
    expect(host.exitCode).toBe(0);
  });

  it('exits 1 when the leader Lease is lost and the program chose onLost: reject', async () => {
    const clock = new ManualClock(1_700_000_000_000);
    const api = new FakeKubeApi({ clock });
    const host = new FakeHost(['--leader-election-namespace', 'kube-system'], api);
    const done = runProvisioner(
      program((options) => ({
        controller: {
          provisionerName: options.name,
          provisioner: new RecordingProvisioner(),
          leaderElection: { onLost: 'reject' },
          clock,
        },
      })),
      host,
    );
    const advance = (ms: number): Promise<void> => pump(clock, ms, 500);
    await advance(2_000);
    expect(api.objects(resources.leases, 'kube-system')).toHaveLength(1);
    for (const verb of ['get', 'update'] as const) {
      api.prependReactor({ resource: 'leases', verb }, () => {
        throw new Error('api down');
      });
    }
    await advance(20_000);
    await done;
    expect(host.exitCode).toBe(1);
    expect(host.err).toContain('leader election lost; exiting');
  });

  it('saves PVs through the queue store by default: a failed save is retried in the background at once', async () => {
    const host = new FakeHost([]);
    host.api.seed(resources.storageClasses, newStorageClass('standard', 'example.com/test'));
    host.api.seed(
      resources.persistentVolumeClaims,
      newClaim('data', 'uid-1', 'standard', 'example.com/test'),
    );
    host.api.failNext({ resource: 'persistentvolumes', verb: 'create', error: new Error('etcd is busy') });
    const done = runProvisioner(program(), host);

    // The blocking store would only try again 10 s later.
    await eventually(() => expect(host.api.objects(resources.persistentVolumes)).toHaveLength(1));
    const creates = host.api
      .actions()
      .filter((action) => action.verb === 'create' && action.resource === 'persistentvolumes');
    expect(creates).toHaveLength(2);
    host.stopListener?.('SIGTERM');
    await done;
    expect(host.exitCode).toBe(0);
  });

  it('keeps the blocking store with --pv-save-strategy=blocking (or PV_SAVE_STRATEGY)', async () => {
    const metrics = async (argv: readonly string[], env: Record<string, string> = {}): Promise<string> => {
      const port = await freePort();
      const host = new FakeHost([...argv, '--health-port', String(port)]);
      host.env = env;
      const done = runProvisioner(program(), host);
      const text = await eventually(async () => {
        const body = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
        expect(body).toContain('name="claims"');
        return body;
      });
      host.stopListener?.('SIGTERM');
      await done;
      return text;
    };

    expect(await metrics([])).toContain('workqueue_depth{name="unsavedpvs"}');
    expect(await metrics(['--pv-save-strategy=blocking'])).not.toContain('unsavedpvs');
    expect(await metrics([], { PV_SAVE_STRATEGY: 'blocking' })).not.toContain('unsavedpvs');
  });

  it('exits 2 on an unknown PV save strategy', async () => {
    const host = new FakeHost(['--pv-save-strategy', 'later']);
    await runProvisioner(program(), host);
    expect(host.exitCode).toBe(2);
    expect(host.err).toContain('--pv-save-strategy must be queue or blocking, got "later"');
  });
});
