import { describe, expect, it } from 'vitest';
import { parseAuditCliOptions } from '../src/cli-options.ts';

const nfsArgs = ['--provisioner-name', 'p', '--kind', 'nfs-subdir', '--root', '/mnt/export/'];

describe('parseAuditCliOptions', () => {
  it('reads an nfs audit with NFS_PATH and NFS_SERVER from the environment, and the defaults', () => {
    const options = parseAuditCliOptions(nfsArgs, { NFS_PATH: '/export//k8s/', NFS_SERVER: 'nfs.local' });
    expect(options).toEqual({
      kubeconfig: undefined,
      provisionerName: 'p',
      root: '/mnt/export',
      layout: { kind: 'nfs', exportPath: '/export/k8s', server: 'nfs.local' },
      graceMs: 300_000,
      maxDepth: 4,
      output: 'table',
      quotaProjects: false,
      help: false,
      version: false,
    });
  });

  it('reads a hostpath audit: the host root defaults to --root', () => {
    const args = ['--provisioner-name', 'p', '--kind', 'hostpath', '--root', '/mnt/hp', '--grace', '0s'];
    expect(parseAuditCliOptions([...args, '--output', 'json'], {})).toMatchObject({
      layout: { kind: 'hostpath', hostRoot: '/mnt/hp', node: undefined },
      graceMs: 0,
      output: 'json',
    });
    expect(parseAuditCliOptions([...args, '--host-root', '/var/lib/hp', '--node', 'n1'], {}).layout).toEqual({
      kind: 'hostpath',
      hostRoot: '/var/lib/hp',
      node: 'n1',
    });
  });

  it.each([
    [[], {}, /--kind not set/u],
    [
      ['--kind', 'nfs', '--root', '/x', '--provisioner-name', 'p'],
      {},
      /--kind must be one of nfs-subdir, nfs-client, hostpath/u,
    ],
    [nfsArgs, {}, /NFS_PATH not set/u],
    [[...nfsArgs, '--nfs-path', 'relative'], {}, /--nfs-path must be an absolute path/u],
    [[...nfsArgs, '--nfs-path', '/e', '--node', 'n1'], {}, /--node applies to --kind hostpath only/u],
    [[...nfsArgs, '--nfs-path', '/e', '--output', 'yaml'], {}, /--output must be table or json/u],
    [
      [...nfsArgs, '--nfs-path', '/e', '--quota-projects'],
      {},
      /--quota-projects applies to --kind hostpath only/u,
    ],
    [[...nfsArgs, '--nfs-path', '/e', '--grace', '5'], {}, /--grace must be a Go duration/u],
    [
      ['--kind', 'hostpath', '--root', '/', '--provisioner-name', 'p'],
      {},
      /--root must be an absolute path other than \//u,
    ],
    [['--unknown', 'x'], {}, /unknown flag "--unknown"/u],
  ])('refuses %j', (argv, env, message) => {
    expect(() => parseAuditCliOptions(argv, env)).toThrow(message);
  });

  it('reads --quota-projects as a switch, off by default', () => {
    const args = ['--provisioner-name', 'p', '--kind', 'hostpath', '--root', '/mnt/hp'];
    expect(parseAuditCliOptions(args, {}).quotaProjects).toBe(false);
    expect(parseAuditCliOptions([...args, '--quota-projects'], {}).quotaProjects).toBe(true);
  });

  it('accepts --version without the required flags', () => {
    expect(parseAuditCliOptions(['--version'], {})).toMatchObject({ version: true, help: false });
  });

  it('accepts --help without the required flags', () => {
    expect(parseAuditCliOptions(['--help'], {}).help).toBe(true);
  });
});
