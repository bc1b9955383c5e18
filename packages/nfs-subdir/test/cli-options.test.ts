import { describe, expect, it } from 'vitest';
import { parseCliOptions, UsageError, usage } from '../src/cli-options.ts';

const required = { NFS_SERVER: 'nfs.example.com', NFS_PATH: '/export', PROVISIONER_NAME: 'example.com/nfs' };

describe('parseCliOptions', () => {
  it("takes upstream's environment and defaults to /persistentvolumes with leader election on", () => {
    expect(parseCliOptions([], required)).toEqual({
      server: 'nfs.example.com',
      exportPath: '/export',
      provisionerName: 'example.com/nfs',
      mountRoot: '/persistentvolumes',
      kubeconfig: undefined,
      leaderElection: true,
      leaderElectionNamespace: undefined,
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
      metricsPort: 8080,
      deleteUnrecordedNested: false,
      usageIntervalMs: 300_000,
      usageScanRate: 50,
      claimLabelSelector: undefined,
      kubeApiRateLimit: { qps: 50, burst: 100 },
      threadiness: 4,
      pvSaveStrategy: 'queue',
      verbosity: 0,
      help: false,
      warnings: [],
    });
  });

  it.each(['NFS_SERVER', 'NFS_PATH', 'PROVISIONER_NAME'])(
    'refuses to start without %s, as upstream',
    (name) => {
      expect(() => parseCliOptions([], { ...required, [name]: '' })).toThrow(
        new UsageError(
          `${name} not set: pass --${name === 'PROVISIONER_NAME' ? 'provisioner-name' : name.toLowerCase().replace('_', '-')} or set ${name}`,
        ),
      );
    },
  );

  it('reads KUBECONFIG, ENABLE_LEADER_ELECTION, POD_NAMESPACE and the other variables', () => {
    const options = parseCliOptions([], {
      ...required,
      KUBECONFIG: '/k/config',
      ENABLE_LEADER_ELECTION: 'F',
      POD_NAMESPACE: 'storage',
      NFS_MOUNT_ROOT: '/mnt/nfs/',
      METRICS_PORT: '0',
      VERBOSITY: '4',
      DELETE_UNRECORDED_NESTED: 'true',
    });
    expect(options).toMatchObject({
      kubeconfig: '/k/config',
      leaderElection: false,
      leaderElectionNamespace: 'storage',
      mountRoot: '/mnt/nfs',
      metricsPort: 0,
      verbosity: 4,
      deleteUnrecordedNested: true,
    });
  });

  it('prefers flags over the environment and parses Go durations', () => {
    const options = parseCliOptions(
      [
        '--nfs-server=flag.example.com',
        '--mount-root',
        '/srv/nfs',
        '--leader-election=false',
        '--leader-election-lease-duration=1m30s',
        '--leader-election-renew-deadline=45s',
        '--leader-election-retry-period=500ms',
      ],
      required,
    );
    expect(options).toMatchObject({
      server: 'flag.example.com',
      mountRoot: '/srv/nfs',
      leaderElection: false,
      leaseDurationMs: 90_000,
      renewDeadlineMs: 45_000,
      retryPeriodMs: 500,
    });
  });

  it('takes the benchmark tuning flags: claim selector, API rate limit and threadiness', () => {
    const options = parseCliOptions(
      ['--kube-api-qps', '100', '--kube-api-burst', '200', '--threadiness', '8'],
      {
        ...required,
        CLAIM_LABEL_SELECTOR: 'team=storage',
      },
    );
    expect(options).toMatchObject({
      claimLabelSelector: 'team=storage',
      kubeApiRateLimit: { qps: 100, burst: 200 },
      threadiness: 8,
    });
  });

  it.each([
    [
      ['--leader-election=maybe'],
      /--leader-election is a switch: use --leader-election, --leader-election=false or --no-leader-election/u,
    ],
    [['--nfs-path', 'export'], /NFS_PATH must be an absolute path/u],
    [['--mount-root', '/'], /--mount-root must be an absolute path other than \//u],
    [
      ['--leader-election-lease-duration', '15'],
      /--leader-election-lease-duration must be a positive Go duration/u,
    ],
    [['--metrics-port', '70000'], /--metrics-port must be an integer from 0 to 65535/u],
    [['--kube-api-burst', '0'], /--kube-api-burst must be an integer from 1/u],
    [['--no-such-flag'], /no-such-flag/u],
  ])('rejects %j', (argv, message) => {
    expect(() => parseCliOptions(argv, required)).toThrow(message);
  });

  it('accepts --help without any configuration', () => {
    expect(parseCliOptions(['--help'], {}).help).toBe(true);
  });

  it('lists every flag with its environment variable in the help text', () => {
    const text = usage('nfs-subdir-provisioner');
    expect(text).toMatch(/^Usage: nfs-subdir-provisioner \[flags\]/u);
    for (const env of [
      'NFS_SERVER',
      'NFS_PATH',
      'PROVISIONER_NAME',
      'KUBECONFIG',
      'ENABLE_LEADER_ELECTION',
      'CLAIM_LABEL_SELECTOR',
    ]) {
      expect(text).toContain(`$${env}`);
    }
  });
});
