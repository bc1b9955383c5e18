import { describe, expect, it } from 'vitest';
import { BenchUsageError, parseBenchOptions } from '../src/bench-options.ts';

const cwd = '/work';

describe('parseBenchOptions', () => {
  it('defaults to burst, ceiling, delete and the Go comparison with 1000 claims', () => {
    expect(parseBenchOptions([], cwd)).toEqual({
      scenarios: ['burst', 'ceiling', 'delete', 'compare'],
      claims: 1000,
      nfsOperationsClaims: 50,
      upstream: undefined,
      rounds: 3,
      idleSeconds: 5,
      imports: 7,
      baseline: undefined,
      compareQps: 1000,
      compareBurst: 1000,
      existingPairs: [10000],
      out: '/work/bench-results.json',
      chart: '/work/bench-results.svg',
      timelineChart: '/work/bench-results-timeline.svg',
      cpuProfileDir: undefined,
      logDir: undefined,
      provisionerArgs: [],
      nodeFlags: [],
      ours: 'image',
      volumeDir: undefined,
      help: false,
      version: false,
    });
  });

  it('runs the burst whenever ceiling or delete is asked for, and compare with go-defaults, in run order', () => {
    expect(parseBenchOptions(['--scenario', 'delete'], cwd).scenarios).toEqual(['burst', 'delete']);
    expect(parseBenchOptions(['--scenario=scale,ceiling'], cwd).scenarios).toEqual([
      'burst',
      'ceiling',
      'scale',
    ]);
    expect(parseBenchOptions(['--scenario', 'scale'], cwd).scenarios).toEqual(['scale']);
    expect(parseBenchOptions(['--scenario', 'all'], cwd).scenarios).toEqual([
      'burst',
      'ceiling',
      'delete',
      'scale',
      'compare',
      'go-defaults',
    ]);
    expect(parseBenchOptions(['--scenario', 'go-defaults'], cwd).scenarios).toEqual([
      'compare',
      'go-defaults',
    ]);
  });

  it('leaves the scenarios that need root or a build out of all, and runs them when named', () => {
    expect(parseBenchOptions(['--scenario', 'all'], cwd).scenarios).not.toContain('nfs-operations');
    expect(parseBenchOptions(['--scenario', 'all'], cwd).scenarios).not.toContain('unbundled');
    expect(parseBenchOptions(['--scenario', 'unbundled,nfs-operations,all'], cwd).scenarios).toEqual([
      'burst',
      'ceiling',
      'delete',
      'scale',
      'compare',
      'go-defaults',
      'nfs-operations',
      'unbundled',
    ]);
  });

  it('resolves paths against the given directory and puts the chart beside the JSON', () => {
    const options = parseBenchOptions(['--out', 'out/run.json', '--cpu-prof', 'prof'], cwd);
    expect(options.out).toBe('/work/out/run.json');
    expect(options.chart).toBe('/work/out/run.svg');
    expect(options.cpuProfileDir).toBe('/work/prof');
    expect(parseBenchOptions(['--chart', '/tmp/c.svg'], cwd).chart).toBe('/tmp/c.svg');
    expect(parseBenchOptions(['--volume-dir', 'roots'], cwd).volumeDir).toBe('/work/roots');
    expect(parseBenchOptions(['--volume-dir=/dev/shm'], cwd).volumeDir).toBe('/dev/shm');
  });

  it('passes repeated provisioner and Node.js flags through in order', () => {
    const options = parseBenchOptions(
      [
        '--provisioner-arg=--kube-api-qps=100',
        '--provisioner-arg=--kube-api-burst=200',
        '--node-flag=--max-semi-space-size=2',
      ],
      cwd,
    );
    expect(options.provisionerArgs).toEqual(['--kube-api-qps=100', '--kube-api-burst=200']);
    expect(options.nodeFlags).toEqual(['--max-semi-space-size=2']);
  });

  it('takes N and M', () => {
    const options = parseBenchOptions(['--claims', '200', '--existing', '500'], cwd);
    expect(options.claims).toBe(200);
    expect(options.existingPairs).toEqual([500]);
  });

  it('takes increasing sizes of M, measured in turn', () => {
    expect(parseBenchOptions(['--existing', '10000,100000'], cwd).existingPairs).toEqual([10000, 100000]);
  });

  it.each([
    [['--claims', '0']],
    [['--claims', '1e3']],
    [['--existing', '1000,500']],
    [['--scenario', 'burst,warp']],
    [['--frobnicate']],
    [['positional']],
  ])('refuses %j', (argv) => {
    expect(() => parseBenchOptions(argv, cwd)).toThrow(BenchUsageError);
  });
});

describe('nfs-operations', () => {
  it('provisions 50 claims unless --claims says otherwise, and measures ours alone without --upstream', () => {
    const options = parseBenchOptions(['--scenario', 'nfs-operations'], cwd);
    expect(options.scenarios).toEqual(['nfs-operations']);
    expect(options.nfsOperationsClaims).toBe(50);
    expect(options.upstream).toBeUndefined();
    expect(parseBenchOptions(['--scenario=nfs-operations', '--claims=5'], cwd).nfsOperationsClaims).toBe(5);
  });

  it('resolves --upstream against the given directory', () => {
    expect(parseBenchOptions(['--upstream', 'bin/nfs-subdir-external-provisioner'], cwd).upstream).toBe(
      '/work/bin/nfs-subdir-external-provisioner',
    );
    expect(parseBenchOptions(['--upstream=/opt/upstream'], cwd).upstream).toBe('/opt/upstream');
  });
});

describe('unbundled', () => {
  it('takes rounds, the idle wait, the import count and a baseline directory', () => {
    const options = parseBenchOptions(
      ['--scenario=unbundled', '--rounds=1', '--idle-seconds=2', '--imports=3', '--baseline', 'before'],
      cwd,
    );
    expect(options).toMatchObject({
      scenarios: ['unbundled'],
      rounds: 1,
      idleSeconds: 2,
      imports: 3,
      baseline: '/work/before',
    });
  });

  it.each([[['--idle-seconds', '0']], [['--imports', 'seven']], [['--rounds', '-1']]])(
    'refuses %j',
    (argv) => {
      expect(() => parseBenchOptions(argv, cwd)).toThrow(BenchUsageError);
    },
  );
});

describe('--ours', () => {
  it('runs ours as its image does unless asked for the sources', () => {
    expect(parseBenchOptions([], '/work').ours).toBe('image');
    expect(parseBenchOptions(['--ours=sources'], '/work').ours).toBe('sources');
  });

  it('names the builds it accepts', () => {
    expect(() => parseBenchOptions(['--ours=dist'], '/work')).toThrow(
      '--ours must be image or sources, not "dist"',
    );
  });
});
