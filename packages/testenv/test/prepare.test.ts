import { describe, expect, it } from 'vitest';
import { type PrepareStep, prepare, prepareSteps } from '../src/prepare.ts';

/** A step that records its run in `ran`, fails with `failure` if given, and is unavailable for `reason`. */
function step(name: string, ran: string[], options: { reason?: string; failure?: string } = {}): PrepareStep {
  return {
    name,
    unavailable: () => options.reason,
    run: async (log) => {
      ran.push(name);
      log(`${name} building`);
      if (options.failure !== undefined) throw new Error(options.failure);
      return `/cache/${name}`;
    },
  };
}

describe('kube-testenv prepare', () => {
  it('builds the control plane, helm, the real node, the images, arm64 emulation and the guest, in that order', () => {
    expect(prepareSteps.map((s) => s.name.split(' (')[0])).toEqual([
      'control plane',
      'helm',
      "real node's binaries and pause image",
      'test images and their base',
      'arm64 emulation',
      "guest's kernel and root image",
    ]);
  });

  it('runs every step in order, with a line as each starts and its time when it is ready', async () => {
    const ran: string[] = [];
    const lines: string[] = [];
    const status = await prepare([step('a', ran), step('b', ran)], { log: (l) => lines.push(l), env: {} });
    expect(status).toBe(0);
    expect(ran).toEqual(['a', 'b']);
    expect(lines[0]).toBe('prepare [1/2] a');
    expect(lines[1]).toBe('a building');
    expect(lines[2]).toMatch(/^prepare \[1\/2\] a ready in \d+ms: \/cache\/a$/u);
    expect(lines[3]).toBe('prepare [2/2] b');
    expect(lines.at(-1)).toMatch(/^prepare: ready in \d+ms$/u);
  });

  it('skips a step this machine cannot do with one line saying why, and goes on', async () => {
    const ran: string[] = [];
    const lines: string[] = [];
    const steps = [step('a', ran, { reason: 'no /dev/net/tun' }), step('b', ran)];
    expect(await prepare(steps, { log: (l) => lines.push(l), env: {} })).toBe(0);
    expect(ran).toEqual(['b']);
    expect(lines.filter((l) => l.includes(' a'))).toEqual([
      'prepare [1/2] skipped the a, and its tests will skip: no /dev/net/tun',
    ]);
    expect(lines.at(-1)).toMatch(/\(1 skipped\)$/u);
  });

  it('with CI=true fails before building anything when a step cannot run here', async () => {
    const ran: string[] = [];
    const lines: string[] = [];
    const steps = [step('a', ran), step('b', ran, { reason: 'needs root' })];
    expect(await prepare(steps, { log: (l) => lines.push(l), env: { CI: 'true' } })).toBe(1);
    expect(ran).toEqual([]);
    expect(lines[0]).toBe('prepare: cannot build the b: needs root');
  });

  it('stops at a failed step with its error and status 1', async () => {
    const ran: string[] = [];
    const lines: string[] = [];
    const steps = [step('a', ran, { failure: 'go not found' }), step('b', ran)];
    expect(await prepare(steps, { log: (l) => lines.push(l), env: {} })).toBe(1);
    expect(ran).toEqual(['a']);
    expect(lines.at(-1)).toMatch(/^prepare \[1\/2\] a failed after \d+ms: go not found$/u);
  });
});
