/** Clone volumes for tests: each copy ends only when the test says so. */
import type { CloneCopyOptions, CloneProgress, CloneVolumes } from '../../src/clone/index.ts';

/** One copy in flight, as {@link ManualVolumes} recorded it. */
export interface Copy {
  readonly source: string;
  readonly options: { readonly label: string } & CloneCopyOptions;
  finish(outcome: CloneProgress | Error): void;
}

/** Volumes whose copies end only when the test says so; an aborted copy rejects with its reason. */
export class ManualVolumes implements CloneVolumes<string, { readonly label: string }> {
  readonly copies: Map<string, Copy> = new Map();
  readonly deleted: string[] = [];

  cloneVolume(sourcePath: string, path: string, options: Copy['options']): Promise<CloneProgress> {
    return new Promise((resolve, reject) => {
      const finish = (outcome: CloneProgress | Error) =>
        outcome instanceof Error ? reject(outcome) : resolve(outcome);
      options.signal.addEventListener('abort', () => reject(options.signal.reason));
      this.copies.set(path, { source: sourcePath, options, finish });
    });
  }

  async deleteVolume(path: string, options: { readonly recordedOnly: true }): Promise<void> {
    // Only the clone's own recorded volume may go: the jobs must say so every time.
    if (options.recordedOnly !== true) throw new Error('a failed clone may remove only its recorded volume');
    this.deleted.push(path);
  }
}
