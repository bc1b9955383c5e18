/**
 * The first check of every project image's test: the image starts on its architecture and its program
 * answers `--version` and `--help`, as `kubectl run … -- --version` would show it.
 */
import { startContainer } from './container.ts';
import { architectureTag, type ImageArchitecture, type ProjectImage } from './project-images.ts';

/**
 * Runs `image` for `architecture` with `--version`, then `--help`, and rejects unless each exits 0
 * and prints `<program> x.y.z`, respectively a line starting `Usage: <program> `.
 */
export async function checkVersionAndHelp(
  image: ProjectImage,
  architecture: ImageArchitecture,
  program: string,
): Promise<void> {
  const name = program.replace(/[.*+?^${}()|[\]\\]/gu, '\\$&');
  const cases = [
    { args: ['--version'], expected: new RegExp(`^${name} \\d+\\.\\d+\\.\\d+$`, 'mu') },
    { args: ['--help'], expected: new RegExp(`^Usage: ${name} `, 'mu') },
  ];
  for (const { args, expected } of cases) {
    const run = await startContainer({
      image: architectureTag(image, architecture),
      platform: `linux/${architecture}`,
      args,
    });
    const code = await run.program.exited;
    await run.stop();
    const output = run.program.output();
    if (code !== 0 || !expected.test(output)) {
      throw new Error(
        `${program} ${args.join(' ')} on linux/${architecture}: expected exit code 0 and output matching ${expected}, got ${code} and:\n${output}`,
      );
    }
  }
}
