import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { OperationContext } from '@kube-provisioner/controller';
import { isLeadershipLapsedError, LeadershipLapsedError } from '@kube-provisioner/controller/leader-election';
import { createLogger } from '@kube-provisioner/controller/logging';
import { describe, expect, it } from 'vitest';
import {
  claim,
  context,
  failed,
  nfsProvisioner,
  provisioned,
  provisionOptions,
  released,
  storageClass,
  temporaryRoot,
} from './fixtures.ts';

/**
 * A context whose term ends after `checks` passing `assertLeader()` calls, as when the process was
 * paused during a directory step and its Lease went to a successor; it records the log messages.
 */
function termEndingAfter(checks: number): OperationContext & { messages: string[] } {
  const messages: string[] = [];
  let left = checks;
  return {
    signal: new AbortController().signal,
    assertLeader() {
      if (left-- <= 0)
        throw new LeadershipLapsedError('lease test/nfs not renewed within the renew deadline');
    },
    logger: createLogger({
      level: 'debug',
      write: (line) => messages.push((JSON.parse(line) as { msg: string }).msg),
    }),
    messages,
  };
}

describe('a term that ends during a directory step', () => {
  it('checks the term before creating: nothing is made once it ended', async () => {
    await using root = await temporaryRoot();
    const term = termEndingAfter(0);
    const result = await nfsProvisioner('nfs-subdir', root.path).provision(provisionOptions(claim()), term);

    expect(isLeadershipLapsedError(failed(result, false))).toBe(true);
    expect(await readdir(root.path)).toEqual([]);
  });

  it('reports a create that outlived the term as lapsed, not as a ready volume', async () => {
    await using root = await temporaryRoot();
    const term = termEndingAfter(1);
    const result = await nfsProvisioner('nfs-subdir', root.path).provision(provisionOptions(claim()), term);

    expect(isLeadershipLapsedError(failed(result, false))).toBe(true);
    expect(term.messages).not.toContain('volume directory ready');
  });

  it.each([
    ['delete', 'volume directory deleted'],
    ['archive', 'volume directory archived'],
    ['retain', 'keeping the volume directory'],
  ] as const)(
    'onDelete %s: a removal that outlived the term throws instead of logging it done',
    async (onDelete, line) => {
      await using root = await temporaryRoot();
      const provisioner = nfsProvisioner('nfs-subdir', root.path);
      const sc = storageClass({ onDelete });
      const pv = provisioned(await provisioner.provision(provisionOptions(claim(), sc), context));
      const term = termEndingAfter(1);

      const deleting = provisioner.delete(released(pv, sc), term);

      await expect(deleting).rejects.toSatisfy(isLeadershipLapsedError);
      expect(term.messages).not.toContain(line);
    },
  );

  it('touches no directory once the term ended before the removal', async () => {
    await using root = await temporaryRoot();
    const provisioner = nfsProvisioner('nfs-subdir', root.path);
    const sc = storageClass({ onDelete: 'delete' });
    const pv = provisioned(await provisioner.provision(provisionOptions(claim(), sc), context));

    await expect(provisioner.delete(released(pv, sc), termEndingAfter(0))).rejects.toSatisfy(
      isLeadershipLapsedError,
    );
    expect(existsSync(join(root.path, basename(pv.spec?.nfs?.path ?? '')))).toBe(true);
  });
});
