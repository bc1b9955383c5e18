// biome-ignore-all lint/suspicious/noTemplateCurlyInString: pathPattern placeholders are literal text, not JS templates
import { isInfeasibleError } from '@kube-provisioner/controller';
import { describe, expect, it } from 'vitest';
import { legacyDeletePolicy, parseClassParameters } from '../src/class-parameters.ts';

function problem(run: () => unknown): string {
  try {
    run();
  } catch (err) {
    expect(isInfeasibleError(err)).toBe(true);
    return (err as Error).message;
  }
  throw new Error('expected the parameters to be refused');
}

describe('parseClassParameters', () => {
  it('archives by default, as both upstreams', () => {
    expect(parseClassParameters('nfs-subdir', undefined)).toEqual({
      onDelete: 'archive',
      pathPattern: undefined,
      adoptExisting: false,
      adoptAmbiguousNamespacePrefix: false,
      takeBackFromNamespaces: [],
      cloneSpecialFiles: 'refuse',
    });
    expect(parseClassParameters('nfs-client', {}).onDelete).toBe('archive');
  });

  it.each(['0', 'f', 'F', 'FALSE', 'false', 'False'])('deletes with archiveOnDelete %j', (value) => {
    expect(parseClassParameters('nfs-client', { archiveOnDelete: value }).onDelete).toBe('delete');
  });

  it.each(['1', 't', 'T', 'TRUE', 'true', 'True'])('archives with archiveOnDelete %j', (value) => {
    expect(parseClassParameters('nfs-client', { archiveOnDelete: value }).onDelete).toBe('archive');
  });

  it('lets onDelete decide over archiveOnDelete (the Helm chart always sets archiveOnDelete)', () => {
    expect(parseClassParameters('nfs-subdir', { onDelete: 'delete', archiveOnDelete: 'true' }).onDelete).toBe(
      'delete',
    );
    expect(
      parseClassParameters('nfs-subdir', { onDelete: 'archive', archiveOnDelete: 'false' }).onDelete,
    ).toBe('archive');
  });

  it('drops slashes around the template itself and treats an empty one as absent', () => {
    expect(parseClassParameters('nfs-subdir', { pathPattern: '/${.PVC.name}/' }).pathPattern).toBe(
      '${.PVC.name}',
    );
    expect(parseClassParameters('nfs-subdir', { pathPattern: '' }).pathPattern).toBeUndefined();
  });

  it.each([
    [
      { onDelete: 'Delete' },
      'invalid value "Delete" for parameter "onDelete": accepted values: delete, retain, archive',
    ],
    [
      { archiveOnDelete: 'nope' },
      'invalid value "nope" for parameter "archiveOnDelete": accepted values: 1 t T TRUE true True 0 f F FALSE false False',
    ],
    [
      { pathPatern: 'x' },
      'unknown parameter "pathPatern": accepted parameters: onDelete, archiveOnDelete, pathPattern, adoptExisting, adoptAmbiguousNamespacePrefix, archiveRetention, takeBackFromNamespaces, cloneSpecialFiles, gidMin, gidMax, snapshotsPerClaim, snapshotRetention',
    ],
    [
      { adoptExisting: 'yes' },
      'invalid value "yes" for parameter "adoptExisting": accepted values: true, false',
    ],
  ])('nfs-subdir refuses %j precisely', (parameters, message) => {
    expect(problem(() => parseClassParameters('nfs-subdir', parameters))).toBe(
      `invalid StorageClass parameters: ${message}`,
    );
  });

  it('lists every problem at once', () => {
    const message = problem(() => parseClassParameters('nfs-subdir', { onDelete: 'x', foo: 'y' }));
    expect(message).toContain('parameter "onDelete"');
    expect(message).toContain('unknown parameter "foo"');
  });

  it('nfs-client accepts archiveOnDelete, archiveRetention, takeBackFromNamespaces, cloneSpecialFiles and the snapshot bounds only', () => {
    for (const key of ['onDelete', 'pathPattern', 'adoptExisting']) {
      expect(problem(() => parseClassParameters('nfs-client', { [key]: 'delete' }))).toBe(
        `invalid StorageClass parameters: unknown parameter "${key}": accepted parameters: archiveOnDelete, archiveRetention, takeBackFromNamespaces, cloneSpecialFiles, snapshotsPerClaim, snapshotRetention`,
      );
    }
  });

  it.each(['nfs-client', 'nfs-subdir'] as const)(
    '%s accepts the snapshot bounds, read by the snapshot taker, and refuses malformed ones',
    (dialect) => {
      expect(() =>
        parseClassParameters(dialect, { snapshotsPerClaim: '3', snapshotRetention: '168h' }),
      ).not.toThrow();
      expect(
        problem(() => parseClassParameters(dialect, { snapshotsPerClaim: 'x', snapshotRetention: '0s' })),
      ).toBe(
        'invalid StorageClass parameters: invalid value "x" for parameter "snapshotsPerClaim": accepted values: a whole number of snapshots from 1, such as 5; invalid value "0s" for parameter "snapshotRetention": accepted values: a positive Go duration such as 720h',
      );
    },
  );

  it('reads archiveRetention as a positive Go duration and refuses anything else', () => {
    expect(parseClassParameters('nfs-subdir', { archiveRetention: '720h' })).toMatchObject({
      archiveRetention: '720h',
      archiveRetentionMs: 720 * 3_600_000,
    });
    for (const value of ['0s', '-1h', '30 days']) {
      expect(problem(() => parseClassParameters('nfs-client', { archiveRetention: value }))).toBe(
        `invalid StorageClass parameters: invalid value ${JSON.stringify(value)} for parameter "archiveRetention": accepted values: a positive Go duration such as 720h`,
      );
    }
  });
});

describe('legacyDeletePolicy (PVs made by the upstream programs)', () => {
  it.each([
    ['nfs-subdir', { onDelete: 'delete', archiveOnDelete: 'true' }, 'delete'],
    ['nfs-subdir', { onDelete: 'retain' }, 'retain'],
    // Upstream falls through to archiveOnDelete for any other onDelete value.
    ['nfs-subdir', { onDelete: 'Delete' }, 'archive'],
    ['nfs-subdir', { onDelete: 'archive', archiveOnDelete: 'false' }, 'delete'],
    ['nfs-subdir', undefined, 'archive'],
    // nfs-client never read onDelete.
    ['nfs-client', { onDelete: 'delete' }, 'archive'],
    ['nfs-client', { archiveOnDelete: 'F' }, 'delete'],
  ] as const)('%s with %j → %s', (dialect, parameters, policy) => {
    expect(legacyDeletePolicy(dialect, parameters)).toEqual({ policy });
  });

  it('archives on an unparsable archiveOnDelete, where upstream failed every Delete, and says why', () => {
    expect(legacyDeletePolicy('nfs-client', { archiveOnDelete: 'nope' })).toEqual({
      policy: 'archive',
      problem:
        'invalid archiveOnDelete "nope" (accepted values: 1 t T TRUE true True 0 f F FALSE false False)',
    });
  });
});
