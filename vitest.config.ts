// One vitest project per workspace package for fast unit tests (`<dir>`), and one for its end-to-end
// tests (`<dir>:e2e`, files named `*.e2e.test.ts`) that run against the real control plane.
// Each package's `test:unit` / `test` script selects its own projects, so turbo can cache them per
// package; the JSON report lands in `<package>/.vitest/<script>.json` for `.ci/run` to total.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';

const root = import.meta.dirname;
const sourceCondition = '@kube-provisioner/source';
// Starts one control plane per vitest run, or hands over TESTENV_KUBECONFIG's cluster (set by
// `kube-testenv exec` around `npm test`), and provides it to every end-to-end test file.
const testenvSetup = join(root, 'packages/testenv/src/vitest-setup.ts');

function workspaceDirs(): string[] {
  return ['packages', 'examples'].flatMap((group) => {
    const base = join(root, group);
    if (!existsSync(base)) return [];
    return readdirSync(base, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && existsSync(join(base, entry.name, 'package.json')))
      .map((entry) => join(group, entry.name));
  });
}

function projectsFor(dir: string): TestProjectInlineConfiguration[] {
  const name = dir.split('/').pop() ?? dir;
  const shared = {
    root: join(root, dir),
    // Tests import workspace packages from source, so no build is needed first.
    ssr: { resolve: { conditions: [sourceCondition] } },
    resolve: { conditions: [sourceCondition] },
  };
  return [
    {
      ...shared,
      test: {
        name,
        include: ['test/**/*.test.ts'],
        exclude: ['test/**/*.e2e.test.ts'],
        environment: 'node',
        // Generous: a few unit tests spawn a CLI process, which is slow on a loaded 2-core machine.
        testTimeout: 30_000,
      },
    },
    {
      ...shared,
      test: {
        name: `${name}:e2e`,
        include: ['test/**/*.e2e.test.ts'],
        environment: 'node',
        globalSetup: [testenvSetup],
        // One shared cluster: files must not race each other (fault hooks restart its components),
        // and CI has two cores.
        fileParallelism: false,
        testTimeout: 120_000,
        hookTimeout: 180_000,
      },
    },
  ];
}

/**
 * safe-fs's unit suite once more with every default call made on the event loop's thread
 * (`localFsOps`, hostpath's choice on a local disk) instead of libuv's thread pool.
 */
function localOpsProject(): TestProjectInlineConfiguration {
  const [unit] = projectsFor('packages/safe-fs');
  if (unit?.test === undefined) throw new Error('no safe-fs project');
  return {
    ...unit,
    test: { ...unit.test, name: 'safe-fs:local-ops', setupFiles: ['test/support/local-fs-ops.ts'] },
  };
}

const script = process.env.npm_lifecycle_event ?? 'vitest';

export default defineConfig({
  test: {
    projects: [...workspaceDirs().flatMap(projectsFor), localOpsProject()],
    passWithNoTests: true,
    reporters: [
      'default',
      'json',
      // Each file's time with its hooks, beside the JSON report: `.ci/run`'s summary lists the slowest.
      [
        join(root, 'scripts/file-durations-reporter.ts'),
        { outputFile: join(process.cwd(), '.vitest', `${script}.files.json`) },
      ],
    ],
    outputFile: { json: join(process.cwd(), '.vitest', `${script}.json`) },
  },
});
