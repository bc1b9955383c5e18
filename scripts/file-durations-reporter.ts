/**
 * A vitest reporter that writes each test file's duration, hooks included, as JSON
 * (`[{ file, project, durationMs }]`) for scripts/test-summary.ts to list the slowest. The JSON
 * report's per-file start and end times span only the tests, so a file whose `beforeAll` starts a
 * real node or boots a guest would look fast there.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

/** Options of {@link FileDurationsReporter}. */
export interface FileDurationsOptions {
  /** Where the JSON goes. */
  readonly outputFile: string;
}

/** Writes `outputFile` when the run ends. */
export default class FileDurationsReporter implements Reporter {
  readonly #outputFile: string;

  constructor(options: FileDurationsOptions) {
    this.#outputFile = options.outputFile;
  }

  onTestRunEnd(testModules: readonly TestModule[]): void {
    const files = testModules.map((module) => ({
      file: module.moduleId,
      project: module.project.name,
      durationMs: Math.round(module.diagnostic().duration),
    }));
    mkdirSync(dirname(this.#outputFile), { recursive: true });
    writeFileSync(this.#outputFile, `${JSON.stringify(files, null, 1)}\n`);
  }
}
