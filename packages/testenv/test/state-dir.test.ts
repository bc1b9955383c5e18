import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { attachControlPlane, startControlPlane } from '../src/control-plane.ts';
import { readPid, readState, removePid, stateLayout, writePid } from '../src/state-dir.ts';
import { temporaryDir } from './support/temporary-dir.ts';

describe('state directory', () => {
  it('round-trips pids, and has no state until a control plane was started', async () => {
    const layout = stateLayout(await temporaryDir('kube-testenv-state-'));
    expect(await readState(layout)).toBeUndefined();
    await writePid(layout, 'kube-scheduler', 4242);
    expect(await readPid(layout, 'kube-scheduler')).toBe(4242);
    await removePid(layout, 'kube-scheduler');
    expect(await readPid(layout, 'kube-scheduler')).toBeUndefined();
  });

  it('cannot be attached to without a control plane', async () => {
    const dir = await temporaryDir('kube-testenv-state-');
    await expect(attachControlPlane(dir)).rejects.toThrow(`no kube-testenv control plane in ${dir}`);
  });

  it('is never wiped when it holds files kube-testenv did not create', async () => {
    const dir = await temporaryDir('kube-testenv-state-');
    await mkdir(join(dir, 'src'));
    await writeFile(join(dir, 'precious.txt'), 'keep me');
    await expect(startControlPlane({ dir })).rejects.toThrow(/not empty and was not created by kube-testenv/);
  });
});
