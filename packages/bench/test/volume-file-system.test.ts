import { tmpdir } from 'node:os';
import { fsOpsForRoot } from '@kube-provisioner/safe-fs';
import { describe, expect, it } from 'vitest';
import { type FileSystemProbe, fileSystemLabel, volumeFileSystem } from '../src/volume-file-system.ts';

/** The report's label of the file system `probe` describes. */
const labelOf = (path: string, probe?: FileSystemProbe): string =>
  fileSystemLabel(volumeFileSystem(path, probe));

/** A probe of an ext4 on device 254:1 (`vda1`) whose options file reads `options`. */
function ext4Probe(options: string | Error): FileSystemProbe & { readonly read: string[] } {
  const read: string[] = [];
  return {
    read,
    fileSystemName: () => 'ext4',
    device: () => (254 << 8) | 1,
    readLink: (path) => {
      read.push(path);
      return '../../devices/pci0000:00/0000:00:02.0/virtio1/block/vda/vda1';
    },
    readText: (path) => {
      read.push(path);
      if (options instanceof Error) throw options;
      return options;
    },
  };
}

describe('volumeFileSystem and its label', () => {
  it('names an ext4 whose options give a data mode plainly: it has a journal', () => {
    const probe = ext4Probe('rw\nbsddf\ndelalloc\ndata=ordered\ncommit=5\n');
    expect(labelOf('/srv', probe)).toBe('ext4');
    expect(probe.read).toEqual(['/sys/dev/block/254:1', '/proc/fs/ext4/vda1/options']);
  });

  it('says so of an ext4 without a journal (no data mode among its options)', () => {
    const probe = ext4Probe('rw\nbsddf\ndelalloc\nnojournal_checksum\ncommit=5\n');
    expect(labelOf('/srv', probe)).toBe('ext4, no journal');
    expect(volumeFileSystem('/srv', probe)).toEqual({ name: 'ext4', journal: false });
  });

  it('reads minor numbers above 255 from both parts of the device number', () => {
    const probe = { ...ext4Probe('data=ordered\n'), device: () => (7 << 8) | (0x3 << 20) | 0x21 };
    const read: string[] = [];
    labelOf('/srv', {
      ...probe,
      readLink: (path) => {
        read.push(path);
        return 'loop801';
      },
    });
    expect(read).toEqual(['/sys/dev/block/7:801']);
  });

  it('leaves the name alone when the options cannot be read', () => {
    expect(volumeFileSystem('/srv', ext4Probe(new Error('ENOENT')))).toEqual({ name: 'ext4' });
    expect(labelOf('/srv', ext4Probe(new Error('ENOENT')))).toBe('ext4');
  });

  it('does not look further for other file systems', () => {
    const probe = { ...ext4Probe('data=ordered\n'), fileSystemName: () => 'tmpfs' };
    expect(labelOf('/dev/shm', probe)).toBe('tmpfs');
    expect(probe.read).toEqual([]);
  });

  it("starts with safe-fs's name of this machine's temporary directory", () => {
    expect(labelOf(tmpdir())).toMatch(new RegExp(`^${fsOpsForRoot(tmpdir()).fileSystem}`));
  });
});
