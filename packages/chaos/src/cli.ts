#!/usr/bin/env node
/**
 * `npm run chaos -- [--claims N] [--seed S]`: the chaos end-to-end test at another size, e.g. 2000
 * claims per target before a release. Runs the test file through vitest, which starts a control plane
 * unless `TESTENV_KUBECONFIG` names one; exits with vitest's code (2 for bad flags).
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const repositoryRoot = join(import.meta.dirname, '..', '..', '..');
const usage = 'Usage: npm run chaos -- [--claims N (default 150, at least 10)] [--seed S (default random)]';

function parse(): { claims: string; seed: string | undefined } {
  try {
    const { values } = parseArgs({
      args: process.argv.slice(2),
      options: {
        claims: { type: 'string', default: '150' },
        seed: { type: 'string' },
        help: { type: 'boolean' },
      },
      strict: true,
    });
    if (values.help) {
      console.log(usage);
      process.exit(0);
    }
    if (!/^\d+$/u.test(values.claims) || Number(values.claims) < 10)
      throw new Error('--claims must be an integer of at least 10');
    if (values.seed !== undefined && !/^\d+$/u.test(values.seed))
      throw new Error('--seed must be a non-negative integer');
    return { claims: values.claims, seed: values.seed };
  } catch (err) {
    console.error(`chaos: ${(err as Error).message}\n${usage}`);
    process.exit(2);
  }
}

const { claims, seed } = parse();
const child = spawn(
  'vitest',
  ['run', '--config', join(repositoryRoot, 'vitest.config.ts'), '--project', 'chaos:e2e'],
  {
    cwd: join(repositoryRoot, 'packages', 'chaos'),
    stdio: 'inherit',
    env: { ...process.env, CHAOS_CLAIMS: claims, ...(seed === undefined ? {} : { CHAOS_SEED: seed }) },
  },
);
child.on('exit', (code, signal) => {
  process.exitCode = code ?? (signal === null ? 1 : 128);
});
