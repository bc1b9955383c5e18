import { isInfeasibleError } from '@kube-provisioner/controller';
import { describe, expect, it } from 'vitest';
import {
  annVolumeType,
  type ClassParameters,
  parseClassParameters,
  resolveVolumeType,
} from '../src/class-parameters.ts';

function failure(run: () => unknown): Error {
  try {
    run();
  } catch (err) {
    expect(isInfeasibleError(err)).toBe(true);
    return err as Error;
  }
  throw new Error('expected a failure');
}

describe('parseClassParameters', () => {
  it('defaults to hostPath volumes named after the PV with mode 0777 and unchanged owner', () => {
    expect(parseClassParameters(undefined)).toEqual({
      volumeType: 'hostPath',
      allowVolumeTypeAnnotation: false,
      pathPattern: undefined,
      mode: 0o777,
      uid: undefined,
      gid: undefined,
      enforceSize: false,
      hardLimitGracePercent: 0,
      softLimitGracePercent: undefined,
      inodeLimit: 'auto',
      onDelete: 'delete',
      takeBackFromNamespaces: [],
      cloneSpecialFiles: 'refuse',
      roots: undefined,
    });
  });

  it('accepts every documented parameter', () => {
    expect(
      parseClassParameters({
        volumeType: 'local',
        allowVolumeTypeAnnotation: 'true',
        pathPattern: 'tenants/data',
        mode: '2770',
        uid: '1000',
        gid: '0',
        enforceSize: 'true',
        softLimitGrace: '5%',
        hardLimitGrace: '20%',
        inodeLimit: '50000',
        onDelete: 'retain',
        takeBackFromNamespaces: 'team-b, team-c',
        cloneSpecialFiles: 'skip',
        roots: 'fast, bulk,fast',
      }),
    ).toEqual({
      volumeType: 'local',
      allowVolumeTypeAnnotation: true,
      pathPattern: 'tenants/data',
      mode: 0o2770,
      uid: 1000,
      gid: 0,
      enforceSize: true,
      softLimitGracePercent: 5,
      hardLimitGracePercent: 20,
      inodeLimit: 50_000,
      onDelete: 'retain',
      takeBackFromNamespaces: ['team-b', 'team-c'],
      cloneSpecialFiles: 'skip',
      roots: ['fast', 'bulk'],
    });
  });

  it('refuses limit graces without enforcement, out of range, or a soft limit above the hard one', () => {
    expect(failure(() => parseClassParameters({ hardLimitGrace: '10%' })).message).toContain(
      'parameter "hardLimitGrace" needs "enforceSize": "true"',
    );
    expect(
      failure(() => parseClassParameters({ enforceSize: 'true', hardLimitGrace: '1001%' })).message,
    ).toContain('invalid value "1001%" for parameter "hardLimitGrace"');
    expect(
      failure(() =>
        parseClassParameters({ enforceSize: 'true', softLimitGrace: '20%', hardLimitGrace: '10%' }),
      ).message,
    ).toContain('"softLimitGrace" must not be above "hardLimitGrace"');
  });

  it('takes an inode limit of auto, none or a whole number, only with enforcement', () => {
    const inodeLimit = (value: string) =>
      parseClassParameters({ enforceSize: 'true', inodeLimit: value }).inodeLimit;
    expect(parseClassParameters({ enforceSize: 'true' }).inodeLimit).toBe('auto');
    expect(inodeLimit('auto')).toBe('auto');
    expect(inodeLimit('none')).toBe('none');
    expect(inodeLimit('1')).toBe(1);
    expect(inodeLimit('999999999999999')).toBe(999_999_999_999_999);
    expect(failure(() => parseClassParameters({ inodeLimit: '1000' })).message).toContain(
      'parameter "inodeLimit" needs "enforceSize": "true"',
    );
  });

  it.each(['0', '-1', '01', '1e6', '100k', '1.5', ' 100', 'Auto', 'unlimited', '', '1000000000000000'])(
    'rejects inodeLimit=%j naming the parameter and what it accepts',
    (value) => {
      const message = failure(() => parseClassParameters({ enforceSize: 'true', inodeLimit: value })).message;
      expect(message).toContain(`invalid value ${JSON.stringify(value)} for parameter "inodeLimit"`);
      expect(message).toContain('accepted values: auto, none, or a whole number of inodes from 1 to');
    },
  );

  it('reads three-digit modes as octal', () => {
    expect(parseClassParameters({ mode: '750' }).mode).toBe(0o750);
  });

  it('names an unknown parameter and lists the accepted ones', () => {
    expect(failure(() => parseClassParameters({ pathPatern: 'x' })).message).toContain(
      'unknown parameter "pathPatern": accepted parameters: volumeType, allowVolumeTypeAnnotation, pathPattern, mode, uid, gid, enforceSize, softLimitGrace, hardLimitGrace, inodeLimit, onDelete, takeBackFromNamespaces, cloneSpecialFiles, roots, snapshotsPerClaim, snapshotRetention',
    );
  });

  it('accepts the snapshot bounds, read by the snapshot taker, and refuses malformed ones', () => {
    expect(() => parseClassParameters({ snapshotsPerClaim: '3', snapshotRetention: '168h' })).not.toThrow();
    const message = failure(() =>
      parseClassParameters({ snapshotsPerClaim: '0', snapshotRetention: '7d' }),
    ).message;
    expect(message).toContain(
      'invalid value "0" for parameter "snapshotsPerClaim": accepted values: a whole number of snapshots from 1, such as 5',
    );
    expect(message).toContain(
      'invalid value "7d" for parameter "snapshotRetention": accepted values: a positive Go duration such as 720h',
    );
  });

  it.each([
    ['volumeType', 'Local', 'accepted values: hostPath, local'],
    ['volumeType', '', 'accepted values: hostPath, local'],
    ['allowVolumeTypeAnnotation', 'yes', 'accepted values: true, false'],
    ['onDelete', 'archive', 'accepted values: delete, retain'],
    ['cloneSpecialFiles', 'copy', 'accepted values: refuse, skip'],
    ['roots', 'fast,,bulk', 'a comma-separated list of root names'],
    ['roots', 'Fast', 'a comma-separated list of root names'],
    ['takeBackFromNamespaces', 'team-a,,team-b', 'a comma-separated list of namespaces, or *'],
    ['pathPattern', '  ', 'a non-empty directory template'],
    ['mode', '0o777', 'an octal mode of 3 or 4 digits'],
    ['mode', '0888', 'an octal mode of 3 or 4 digits'],
    ['mode', '17777', 'an octal mode of 3 or 4 digits'],
    ['uid', '-1', 'a decimal user id'],
    ['uid', '4294967295', 'a decimal user id'],
    ['uid', '1e3', 'a decimal user id'],
    ['gid', '007', 'a decimal group id'],
  ])('rejects %s=%j naming the parameter and its accepted values', (name, value, expected) => {
    const message = failure(() => parseClassParameters({ [name]: value })).message;
    expect(message).toContain(`invalid value ${JSON.stringify(value)} for parameter "${name}"`);
    expect(message).toContain(expected);
  });

  it('reports every problem at once', () => {
    const message = failure(() => parseClassParameters({ mode: 'rwx', archiveOnDelete: 'true' })).message;
    expect(message).toContain('parameter "mode"');
    expect(message).toContain('unknown parameter "archiveOnDelete"');
  });

  it('does not treat inherited object keys as parameters', () => {
    expect(failure(() => parseClassParameters({ toString: 'x' })).message).toContain(
      'unknown parameter "toString"',
    );
  });
});

describe('resolveVolumeType', () => {
  const base: ClassParameters = parseClassParameters({ volumeType: 'hostPath' });
  const permissive: ClassParameters = parseClassParameters({ allowVolumeTypeAnnotation: 'true' });

  it('uses the class type when the claim does not ask', () => {
    expect(resolveVolumeType(base, {})).toBe('hostPath');
    expect(resolveVolumeType(parseClassParameters({ volumeType: 'local' }), undefined)).toBe('local');
  });

  it('lets the claim choose when the class allows it', () => {
    expect(resolveVolumeType(permissive, { [annVolumeType]: 'local' })).toBe('local');
  });

  it('refuses the annotation when the class does not allow it', () => {
    expect(failure(() => resolveVolumeType(base, { [annVolumeType]: 'local' })).message).toContain(
      'allowVolumeTypeAnnotation',
    );
  });

  it('refuses an unknown type in the annotation, listing the accepted values', () => {
    expect(failure(() => resolveVolumeType(permissive, { [annVolumeType]: 'block' })).message).toContain(
      'accepted values: hostPath, local',
    );
  });
});
