/**
 * CI check: `.ci/run` runs the README's commands and nothing else that could build or install, so CI
 * takes a newcomer's path and a fresh machine's `npm install && npm test` cannot go red while CI
 * stays green. Every line of `.ci/run` must be a comment, shell set-up (`set`, `cd` to the root, an
 * `export` of a constant, the `step` progress helper and its calls, the exit status), one of the
 * commands below, or the summary; and the README's Quick start must list the same commands. Prints
 * one line per problem and exits 1 if there is any.
 *
 * `node scripts/check-ci-run.ts [--ci-run <file>] [--readme <file>]`
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

/** What `.ci/run` may run, in this order: the README's set-up and test commands. */
const readmeCommands = ['npm install', 'npm test'] as const;
/** The summary of the run's reports, last. */
const summaryCommand = 'npm exec --no -- node scripts/test-summary.ts --elapsed "$SECONDS"';

/** Lines that run nothing but the script's own set-up. */
const scaffolding: readonly RegExp[] = [
  /^#/u,
  /^set -euo pipefail$/u,
  /^cd "\$\(dirname "\$0"\)\/\.\."$/u,
  // A constant or a default of the caller's value: no command substitution.
  /^export [A-Za-z_][A-Za-z0-9_]*=(?:[\w.:/-]+|"\$\{[A-Za-z_][A-Za-z0-9_]*:-[\w.-]*\}")$/u,
  /^step\(\) \{ printf '[^']*' "\$\*" "\$SECONDS"; \}$/u,
  /^step "[^"$`]*"$/u,
  /^status=0$/u,
  /^exit "\$status"$/u,
];

const { values } = parseArgs({ options: { 'ci-run': { type: 'string' }, readme: { type: 'string' } } });
const root = join(import.meta.dirname, '..');
const ciRunFile = values['ci-run'] ?? join(root, '.ci', 'run');
const readmeFile = values.readme ?? join(root, 'README.md');

const problems: string[] = [];
const commands: string[] = [];
for (const [index, raw] of readFileSync(ciRunFile, 'utf8').split('\n').entries()) {
  const line = raw.trim();
  if (line === '' || scaffolding.some((pattern) => pattern.test(line))) continue;
  // A command's failure may be recorded for the exit status; nothing else may follow it.
  const command = line.replace(/ \|\| status=(?:\$\?|1)$/u, '');
  if (command === summaryCommand || (readmeCommands as readonly string[]).includes(command)) {
    commands.push(command);
  } else {
    problems.push(
      `${ciRunFile}:${index + 1}: runs \`${line}\`; .ci/run may run only the README's ${readmeCommands.join(', ')} and the summary`,
    );
  }
}
const expected = [...readmeCommands, summaryCommand];
if (problems.length === 0 && commands.join('\n') !== expected.join('\n')) {
  problems.push(`${ciRunFile}: runs ${commands.join('; ')}; expected exactly ${expected.join('; ')}`);
}

// The README's Quick start: the first `sh` block after its heading, each line a command and a comment.
const readme = readFileSync(readmeFile, 'utf8');
const quickStart = /^## Quick start\n[\s\S]*?^```sh\n([\s\S]*?)^```/mu.exec(readme)?.[1];
if (quickStart === undefined) {
  problems.push(`${readmeFile}: no \`sh\` block under "## Quick start"`);
} else {
  const listed = quickStart
    .split('\n')
    .map((line) => line.replace(/\s+#.*$/u, '').trim())
    .filter((line) => line !== '');
  const setUp = listed.filter((line) => (readmeCommands as readonly string[]).includes(line));
  if (setUp.join('\n') !== readmeCommands.join('\n')) {
    problems.push(
      `${readmeFile}: its Quick start lists ${listed.join('; ')}; .ci/run runs ${readmeCommands.join(' then ')}, which it must list in that order`,
    );
  }
}

for (const problem of problems) console.error(problem);
process.exitCode = problems.length > 0 ? 1 : 0;
