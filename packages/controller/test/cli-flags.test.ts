import { describe, expect, it } from 'vitest';
import { type FlagSpecs, isUsageError, parseFlags, UsageError, usageText } from '../src/cli/flags.ts';

const specs = {
  server: { env: 'SERVER', description: 'server name' },
  port: { env: 'PORT', default: '8080', description: 'listen port' },
  'lease-duration': { default: '15s', description: 'Lease duration' },
  'leader-election': {
    env: 'ENABLE_LEADER_ELECTION',
    default: 'true',
    description: 'elect a leader',
    boolean: true,
  },
  'no-env': { description: 'flag only' },
  qps: { default: '20', description: 'rate' },
} satisfies FlagSpecs;

describe('parseFlags', () => {
  it('prefers the flag, then the environment variable, then the default', () => {
    expect(parseFlags(specs, ['--port', '1'], { PORT: '2' }).string('port')).toBe('1');
    expect(parseFlags(specs, ['--port=3'], {}).string('port')).toBe('3');
    expect(parseFlags(specs, [], { PORT: '2' }).string('port')).toBe('2');
    expect(parseFlags(specs, [], {}).string('port')).toBe('8080');
    expect(parseFlags(specs, [], {}).string('server')).toBeUndefined();
  });

  it('treats an empty value as unset, so a manifest can blank a variable to get the default', () => {
    expect(parseFlags(specs, [], { PORT: '' }).string('port')).toBe('8080');
    expect(parseFlags(specs, ['--port='], { PORT: '2' }).string('port')).toBe('8080');
  });

  it.each([
    [['--unknown', 'x'], /unknown flag "--unknown"/u],
    [['--port'], /--port needs a value/u],
    [['positional'], /unexpected argument "positional"/u],
    [['--leader-election=maybe'], /--leader-election is a switch/u],
    [['-log_dir'], /-log_dir needs a value/u],
  ])('refuses %j with a UsageError', (argv, message) => {
    const parse = () => parseFlags(specs, argv, {});
    expect(parse).toThrow(UsageError);
    expect(parse).toThrow(message);
  });

  it('names the environment variable of a missing required setting, and waives it for --help', () => {
    expect(() => parseFlags(specs, [], {}).required('server')).toThrow(
      new UsageError('SERVER not set: pass --server or set SERVER'),
    );
    expect(() => parseFlags(specs, [], {}).required('no-env')).toThrow(new UsageError('--no-env not set'));
    const help = parseFlags(specs, ['-h'], {});
    expect(help.help).toBe(true);
    expect(help.required('server')).toBe('');
  });

  it('reads integers in range and names the flag otherwise', () => {
    expect(parseFlags(specs, [], {}).integer('port', 0, 65535)).toBe(8080);
    for (const value of ['70000', '-1', '1e3', '08x', ' 1']) {
      expect(() => parseFlags(specs, [`--port=${value}`], {}).integer('port', 0, 65535)).toThrow(
        `--port must be an integer from 0 to 65535, got ${JSON.stringify(value)}`,
      );
    }
  });

  it('reads absolute directories other than /, normalised, and names the flag otherwise', () => {
    const rootSpecs = { root: { env: 'ROOT', default: '/var/lib/volumes', description: 'volume root' } };
    expect(parseFlags(rootSpecs, [], {}).directory('root')).toBe('/var/lib/volumes');
    expect(parseFlags(rootSpecs, [], { ROOT: '/srv//data/../vol/' }).directory('root')).toBe('/srv/vol');
    for (const value of ['relative/dir', '/', '//', '/srv/..']) {
      expect(() => parseFlags(rootSpecs, [`--root=${value}`], {}).directory('root')).toThrow(
        new UsageError(`--root must be an absolute path other than /, got ${JSON.stringify(value)}`),
      );
    }
  });

  it('reads positive numbers, fractions included', () => {
    expect(parseFlags(specs, ['--qps', '0.5'], {}).positiveNumber('qps')).toBe(0.5);
    for (const value of ['0', '0.0', '-2', 'Infinity', '1e3']) {
      expect(() => parseFlags(specs, [`--qps=${value}`], {}).positiveNumber('qps')).toThrow(
        '--qps must be a number above 0',
      );
    }
  });

  it('reads Go booleans, naming the environment variable Go users set', () => {
    expect(parseFlags(specs, [], {}).goBoolean('leader-election')).toBe(true);
    expect(parseFlags(specs, [], { ENABLE_LEADER_ELECTION: 'F' }).goBoolean('leader-election')).toBe(false);
    expect(() =>
      parseFlags(specs, [], { ENABLE_LEADER_ELECTION: 'yes' }).goBoolean('leader-election'),
    ).toThrow(
      /^ENABLE_LEADER_ELECTION must be a Go boolean \(1 t T TRUE true True 0 f F FALSE false False\), got "yes"$/u,
    );
  });

  it('reads positive Go durations in milliseconds', () => {
    expect(parseFlags(specs, [], {}).goDuration('lease-duration')).toBe(15_000);
    expect(parseFlags(specs, ['--lease-duration=1m30s'], {}).goDuration('lease-duration')).toBe(90_000);
    for (const value of ['15', '0s', '-1s', '1d']) {
      expect(() => parseFlags(specs, [`--lease-duration=${value}`], {}).goDuration('lease-duration')).toThrow(
        '--lease-duration must be a positive Go duration such as 15s',
      );
    }
  });
});

describe('UsageError', () => {
  it('reads a switch as --flag, --flag=<Go boolean>, --flag <Go boolean> and --no-flag', () => {
    const read = (...argv: string[]) => parseFlags(specs, argv, {}).goBoolean('leader-election');
    expect(read('--leader-election')).toBe(true);
    expect(read('--leader-election=false')).toBe(false);
    expect(read('--leader-election=F')).toBe(false);
    expect(read('--leader-election', 'false')).toBe(false);
    expect(read('--no-leader-election')).toBe(false);
    expect(read('-leader-election=true')).toBe(true);
    expect(parseFlags(specs, [], { ENABLE_LEADER_ELECTION: 'false' }).goBoolean('leader-election')).toBe(
      false,
    );
    // `--no-env` is a flag of its own, not the negation of a switch.
    expect(parseFlags(specs, ['--no-env', 'x'], {}).string('no-env')).toBe('x');
  });

  it('reads Go-style single-dash flags, --version and --help', () => {
    expect(parseFlags(specs, ['-port=1'], {}).string('port')).toBe('1');
    expect(parseFlags(specs, ['-port', '2'], {}).string('port')).toBe('2');
    expect(parseFlags(specs, ['--version'], {}).version).toBe(true);
    expect(parseFlags(specs, ['-h'], {}).help).toBe(true);
    expect(parseFlags(specs, [], {})).toMatchObject({ help: false, version: false, warnings: [] });
  });

  it('accepts the klog flags upstream manifests pass, with one warning each', () => {
    const parsed = parseFlags(
      specs,
      [
        '-logtostderr',
        '--alsologtostderr=false',
        '-stderrthreshold=2',
        '-log_dir',
        '/var/log',
        '-add_dir_header',
        '--port=9',
      ],
      {},
    );
    expect(parsed.string('port')).toBe('9');
    expect(parsed.warnings).toEqual([
      'ignoring klog flag -logtostderr: logs are always JSON lines on stderr',
      'ignoring klog flag -alsologtostderr: logs are always JSON lines on stderr',
      'ignoring klog flag -stderrthreshold: logs are always JSON lines on stderr; use -v for verbosity',
      'ignoring klog flag -log_dir: logs are always JSON lines on stderr, never to files',
      'ignoring klog flag -add_dir_header: JSON lines carry no source location',
    ]);
  });

  it('is recognised by brand, across copies of the package', () => {
    expect(isUsageError(new UsageError('bad'))).toBe(true);
    expect(isUsageError(new Error('bad'))).toBe(false);
  });
});

describe('usageText', () => {
  it('lists every flag in one aligned column with its variable and default, then --help', () => {
    expect(usageText('demo', specs).split('\n')).toEqual([
      'Usage: demo [flags]',
      '',
      '  --server <value>          [$SERVER] server name',
      '  --port <value>            [$PORT] listen port (default 8080)',
      '  --lease-duration <value>  Lease duration (default 15s)',
      '  --[no-]leader-election    [$ENABLE_LEADER_ELECTION] elect a leader (default true)',
      '  --no-env <value>          flag only',
      '  --qps <value>             rate (default 20)',
      '  --version                 print the version',
      '  --help                    print this help',
      '',
      'Accepted and ignored, with a warning, for Go manifests (klog): -logtostderr, -alsologtostderr, -stderrthreshold, -log_dir, -log_file, -log_file_max_size, -add_dir_header, -skip_headers, -skip_log_headers, -one_output, -legacy_stderr_threshold_behavior, -log_backtrace_at, -vmodule.',
    ]);
  });
});
