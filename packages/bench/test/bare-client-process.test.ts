import { describe, expect, it } from 'vitest';
import { bareClientCommand, parseBareClientOutput } from '../src/bare-client-process.ts';
import { imageNodeFlags } from '../src/ours-program.ts';

const options = {
  goBinary: '/cache/bench-go',
  kubeconfigPath: '/tmp/kubeconfig',
  prefix: 'ceiling-x',
  count: 10,
  concurrency: 4,
};
const shared = ['--kubeconfig=/tmp/kubeconfig', '--prefix=ceiling-x', '--count=10', '--concurrency=4'];

describe('bareClientCommand', () => {
  it('runs client-go as the Go reference’s create-pvs command', () => {
    expect(bareClientCommand('client-go', options)).toEqual({
      command: '/cache/bench-go',
      args: ['create-pvs', ...shared],
    });
  });

  it('runs both Node.js clients with the image’s flags, from the sources when the bench runs from them', () => {
    for (const client of ['ours', 'node-http2'] as const) {
      const { command, args } = bareClientCommand(client, options);
      expect(command).toBe(process.execPath);
      expect(args.slice(0, 1 + imageNodeFlags.length)).toEqual([
        '--conditions=@kube-provisioner/source',
        ...imageNodeFlags,
      ]);
      expect(args.slice(1 + imageNodeFlags.length)).toEqual([
        expect.stringMatching(/src\/bare-client\.ts$/),
        `--client=${client}`,
        ...shared,
      ]);
    }
  });
});

describe('parseBareClientOutput', () => {
  it('reads the seconds and the CPU seconds both programs print', () => {
    expect(parseBareClientOutput('ours', '{"seconds":1.5,"cpu_seconds":0.5}\n')).toEqual({
      seconds: 1.5,
      cpuSeconds: 0.5,
    });
  });

  it('names the client when a figure is missing', () => {
    expect(() => parseBareClientOutput('client-go', '{"seconds":1.5}')).toThrow(
      /bare client client-go printed no seconds and cpu_seconds/,
    );
  });
});
