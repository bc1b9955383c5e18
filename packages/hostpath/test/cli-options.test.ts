import { UsageError } from '@kube-provisioner/controller/cli';
import { describe, expect, it } from 'vitest';
import { parseCliOptions, usage } from '../src/cli-options.ts';

const node = { NODE_NAME: 'node-a' };

describe('parseCliOptions', () => {
  it('turns the PV finalizer off with --add-finalizer=false or ADD_FINALIZER=false', () => {
    const args = ['--node-name', 'n1'];
    expect(parseCliOptions([...args, '--add-finalizer=false'], {}).addFinalizer).toBe(false);
    expect(parseCliOptions(args, { ADD_FINALIZER: 'false' }).addFinalizer).toBe(false);
  });

  it('defaults to per-node mode under /var/lib/kube-provisioner/hostpath', () => {
    expect(parseCliOptions([], node)).toEqual({
      mode: 'per-node',
      provisionerName: 'kube-provisioner.io/hostpath',
      root: '/var/lib/kube-provisioner/hostpath',
      nodeName: 'node-a',
      nodeAffinityKey: 'kubernetes.io/hostname',
      kubeconfig: undefined,
      healthPort: 8080,
      addFinalizer: true,
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
      publishCapacity: false,
      capacityIntervalMs: 60_000,
      rootsConfigIntervalMs: 10_000,
      pod: { namespace: undefined, name: undefined, uid: undefined },
      usageIntervalMs: 300_000,
      usageScanRate: 500,
      leaderElectionNamespace: undefined,
      claimLabelSelector: undefined,
      kubeApiRateLimit: { qps: 50, burst: 100 },
      threadiness: 4,
      pvSaveStrategy: 'queue',
      verbosity: 0,
      help: false,
      warnings: [],
    });
  });

  it('reads the usage interval and scan rate, where rate 0 turns usage reporting off', () => {
    expect(parseCliOptions(['--usage-interval=90s', '--usage-scan-rate=0'], node)).toMatchObject({
      usageIntervalMs: 90_000,
      usageScanRate: 0,
    });
    expect(parseCliOptions([], { ...node, USAGE_INTERVAL: '1m', USAGE_SCAN_RATE: '2000' })).toMatchObject({
      usageIntervalMs: 60_000,
      usageScanRate: 2000,
    });
    expect(() => parseCliOptions(['--usage-scan-rate=-1'], node)).toThrow(UsageError);
    expect(() => parseCliOptions(['--usage-interval=0s'], node)).toThrow(UsageError);
  });

  it('refuses to start in per-node mode without a node name', () => {
    expect(() => parseCliOptions([], {})).toThrow(/NODE_NAME/);
    expect(() => parseCliOptions([], { NODE_NAME: '' })).toThrow(UsageError);
  });

  it('starts in shared mode without a node name', () => {
    expect(parseCliOptions(['--mode', 'shared'], {}).nodeName).toBeUndefined();
  });

  it('reads every setting from the environment', () => {
    const options = parseCliOptions([], {
      PROVISIONER_MODE: 'shared',
      PROVISIONER_NAME: 'example.com/hostpath',
      HOSTPATH_ROOT: '/tmp/hostpath-provisioner/',
      NODE_NAME: 'n1',
      NODE_AFFINITY_KEY: 'topology.example.com/host',
      KUBECONFIG: '/k/config',
      HEALTH_PORT: '0',
      POD_NAMESPACE: 'storage',
      VERBOSITY: '4',
      CLAIM_LABEL_SELECTOR: 'tier=db',
      KUBE_API_QPS: '50',
      KUBE_API_BURST: '100',
      THREADINESS: '16',
      PV_SAVE_STRATEGY: 'blocking',
    });
    expect(options).toMatchObject({
      mode: 'shared',
      pvSaveStrategy: 'blocking',
      provisionerName: 'example.com/hostpath',
      root: '/tmp/hostpath-provisioner',
      nodeName: 'n1',
      nodeAffinityKey: 'topology.example.com/host',
      kubeconfig: '/k/config',
      healthPort: 0,
      leaderElectionNamespace: 'storage',
      verbosity: 4,
      claimLabelSelector: 'tier=db',
      kubeApiRateLimit: { qps: 50, burst: 100 },
      threadiness: 16,
    });
  });

  it('takes the benchmark tuning flags: claim selector, API rate limit and threadiness', () => {
    const options = parseCliOptions(
      [
        '--claim-label-selector=bench.kube-provisioner.io/role=provisioner',
        '--kube-api-qps=0.5',
        '--kube-api-burst=2',
        '--threadiness=8',
      ],
      node,
    );
    expect(options).toMatchObject({
      claimLabelSelector: 'bench.kube-provisioner.io/role=provisioner',
      kubeApiRateLimit: { qps: 0.5, burst: 2 },
      threadiness: 8,
    });
  });

  it('prefers flags over the environment', () => {
    const options = parseCliOptions(['--node-name=flag-node', '--root', '/srv/volumes'], {
      NODE_NAME: 'env-node',
      HOSTPATH_ROOT: '/env/root',
    });
    expect(options.nodeName).toBe('flag-node');
    expect(options.root).toBe('/srv/volumes');
  });

  it.each([
    [['--mode', 'daemonset'], /--mode must be per-node or shared/],
    [['--root', 'relative/dir'], /--root must be an absolute path/],
    [['--root', '/'], /--root must be an absolute path other than \//],
    [['--health-port', '70000'], /--health-port must be an integer from 0 to 65535/],
    [['--v', 'loud'], /--v must be an integer/],
    [['--kube-api-qps', '0'], /--kube-api-qps must be a number above 0/],
    [['--threadiness', '0'], /--threadiness must be an integer from 1/],
    [['--no-such-flag'], /no-such-flag/],
  ])('rejects %j', (argv, message) => {
    expect(() => parseCliOptions(argv, node)).toThrow(message);
  });

  it('lists every flag with its environment variable in the help text', () => {
    const text = usage();
    for (const env of [
      'PROVISIONER_MODE',
      'NODE_NAME',
      'HOSTPATH_ROOT',
      'KUBECONFIG',
      'HEALTH_PORT',
      'CLAIM_LABEL_SELECTOR',
    ]) {
      expect(text).toContain(`$${env}`);
    }
  });
});

describe('named roots', () => {
  it('reads --root name=/path pairs, the first root standing for the others in logs', () => {
    const options = parseCliOptions(['--root', 'fast=/mnt/nvme/, bulk=/mnt/hdd/../sdb'], node);
    expect(options.namedRoots).toEqual([
      { name: 'fast', path: '/mnt/nvme' },
      { name: 'bulk', path: '/mnt/sdb' },
    ]);
    expect(options.root).toBe('/mnt/nvme');
    expect(parseCliOptions([], { ...node, HOSTPATH_ROOT: 'one=/srv/one' }).namedRoots).toEqual([
      { name: 'one', path: '/srv/one' },
    ]);
  });

  it('reads labels after the name, separated by colons', () => {
    expect(parseCliOptions(['--root', 'nvme0:fast:local=/mnt/a,hdd0=/mnt/b'], node).namedRoots).toEqual([
      { name: 'nvme0', labels: ['fast', 'local'], path: '/mnt/a' },
      { name: 'hdd0', path: '/mnt/b' },
    ]);
  });

  it('keeps a bare path a single unnamed root, even one with = in it', () => {
    expect(parseCliOptions(['--root', '/srv/a=b'], node)).toMatchObject({ root: '/srv/a=b' });
    expect(parseCliOptions(['--root', '/srv/a=b'], node).namedRoots).toBeUndefined();
  });

  it.each([
    [['--root', 'fast=relative'], /--root must be name=\/path pairs .* got "fast=relative"/],
    [['--root', 'fast=/'], /each path absolute and not \//],
    [['--root', 'fast=/a,fast=/b'], /--root: root name fast is given twice/],
    [['--root', 'a=/srv,b=/srv/b'], /--root: root b \(\/srv\/b\) is inside root a \(\/srv\)/],
    [['--root', 'Fast=/srv'], /--root: root name or label "Fast" must be lower-case/],
    [['--root', 'a:Quick=/srv'], /--root: root name or label "Quick" must be lower-case/],
    [['--root', 'a:b=/srv/a,b=/srv/b'], /--root: root name b is also a label of root a/],
    [['--root', 'a=/srv', '--mode', 'shared'], /named roots \(--root name=\/path\) need per-node mode/],
  ])('rejects %j', (argv, message) => {
    expect(() => parseCliOptions(argv, node)).toThrow(message);
  });
});
