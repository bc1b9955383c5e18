import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isProcessAlive } from '../src/process-group.ts';
import { startProgram, workspaceBinCommand } from '../src/program-process.ts';
import { temporaryDir } from './support/temporary-dir.ts';

const env = { PATH: process.env.PATH ?? '' };

describe('programs under test', () => {
  it('capture output and stop gracefully with SIGTERM', async () => {
    const program = await startProgram({
      command: 'sh',
      args: ['-c', `trap 'echo bye; exit 0' TERM; echo ready; while :; do sleep 0.05; done`],
      env,
    });
    await program.waitForOutput(/ready/u, 10_000);
    expect(await program.stop()).toBe(0);
    expect(program.output()).toContain('bye');
    expect(isProcessAlive(program.pid)).toBe(false);
  });

  it('report a program that exits before printing what is awaited', async () => {
    const program = await startProgram({ command: 'sh', args: ['-c', 'echo config error >&2; exit 2'], env });
    await expect(program.waitForOutput(/ready/u, 10_000)).rejects.toThrow(
      /exited with 2[\s\S]*config error/u,
    );
    expect(await program.exited).toBe(2);
  });

  it('pass only the given environment', async () => {
    const program = await startProgram({
      command: 'sh',
      args: ['-c', 'echo "[$HOME][$ONLY]"'],
      env: { ...env, ONLY: 'x' },
    });
    await program.exited;
    expect(program.output()).toBe('[][x]\n');
  });
});

describe('workspace bins', () => {
  it('run the source file behind the bin shim with the source condition', async () => {
    const dir = await temporaryDir('bin-');
    await writeFile(join(dir, 'package.json'), JSON.stringify({ bin: { tool: './bin/tool.js' } }));
    await mkdir(join(dir, 'bin'));
    await writeFile(join(dir, 'bin', 'tool.js'), "#!/usr/bin/env node\nimport '../dist/sub/cli.js';\n");
    expect(workspaceBinCommand(dir, 'tool')).toEqual({
      command: process.execPath,
      args: ['--conditions=@kube-provisioner/source', join(dir, 'src', 'sub', 'cli.ts')],
    });
  });

  it('refuse a missing bin or a shim that imports nothing of dist', async () => {
    const dir = await temporaryDir('bin-');
    await writeFile(join(dir, 'package.json'), JSON.stringify({ bin: { tool: './tool.js' } }));
    await writeFile(join(dir, 'tool.js'), "import './cli.js';\n");
    expect(() => workspaceBinCommand(dir, 'other')).toThrow(/no bin named other/u);
    expect(() => workspaceBinCommand(dir, 'tool')).toThrow(/does not import a file of dist/u);
  });
});
