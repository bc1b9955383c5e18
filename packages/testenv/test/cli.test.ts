import { afterEach, describe, expect, it, vi } from 'vitest';
import { main } from '../src/cli.ts';
import { testenvEnvironment } from '../src/environment.ts';
import { temporaryDir } from './support/temporary-dir.ts';

describe('kube-testenv CLI', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
    vi.restoreAllMocks();
  });

  it('rejects an unknown command with usage and status 2', async () => {
    const stderr = vi.spyOn(process.stderr, 'write').mockReturnValue(true);
    expect(await main(['frobnicate'])).toBe(2);
    expect(String(stderr.mock.calls[0]?.[0])).toContain('Usage: kube-testenv');
  });

  it('reports status 1 for a directory without a control plane', async () => {
    const stdout = vi.spyOn(process.stdout, 'write').mockReturnValue(true);
    const dir = await temporaryDir('kube-testenv-empty-');
    expect(await main(['status', '--dir', dir])).toBe(1);
    expect(String(stdout.mock.calls[0]?.[0])).toBe(`no control plane in ${dir}\n`);
  });

  it('exec runs the command against TESTENV_KUBECONFIG without starting anything, propagating its status', async () => {
    vi.stubEnv('TESTENV_KUBECONFIG', '/existing/kubeconfig');
    vi.spyOn(process.stderr, 'write').mockReturnValue(true);
    const status = await main([
      'exec',
      '--',
      'sh',
      '-c',
      'test "$TESTENV_KUBECONFIG" = /existing/kubeconfig && exit 7',
    ]);
    expect(status).toBe(7);
  });

  it('exec without a command is a usage error', async () => {
    vi.spyOn(process.stderr, 'write').mockReturnValue(true);
    expect(await main(['exec'])).toBe(2);
  });

  it('points processes at the control plane and puts its kubectl first on PATH', () => {
    const env = testenvEnvironment(
      { kubeconfigPath: '/s/kubeconfig.yaml', dir: '/s', binDir: '/bin/k8s' },
      '/usr/bin',
    );
    expect(env).toEqual({
      TESTENV_KUBECONFIG: '/s/kubeconfig.yaml',
      TESTENV_DIR: '/s',
      KUBECONFIG: '/s/kubeconfig.yaml',
      PATH: '/bin/k8s:/usr/bin',
    });
  });

  it('bundle needs exactly an entry point and an output file', async () => {
    const stderr = vi.spyOn(process.stderr, 'write').mockReturnValue(true);
    expect(await main(['bundle', 'only-entry.ts'])).toBe(2);
    expect(String(stderr.mock.calls[0]?.[0])).toContain('bundle needs an entry point and an output file');
  });

  it('refuses operands for commands that take none', async () => {
    const stderr = vi.spyOn(process.stderr, 'write').mockReturnValue(true);
    expect(await main(['status', 'extra'])).toBe(2);
    expect(String(stderr.mock.calls[0]?.[0])).toContain('unexpected arguments: extra');
  });
});
