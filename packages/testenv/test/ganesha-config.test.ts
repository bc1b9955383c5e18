import { describe, expect, it } from 'vitest';
import { ganeshaConfig } from '../src/ganesha-config.ts';

const options = {
  port: 20_490,
  exportDir: '/tmp/x/export',
  pseudoPath: '/export',
  recoveryDir: '/tmp/x/rec',
};

describe('ganesha configuration', () => {
  it('serves NFSv4 over TCP on loopback only, without rpcbind-registered side protocols', () => {
    const config = ganeshaConfig(options);
    expect(config).toContain('Bind_addr = 127.0.0.1;');
    expect(config).toContain('NFS_Port = 20490;');
    expect(config).toMatch(/Protocols = 4;[\s\S]*Enable_UDP = false;[\s\S]*Enable_NLM = false;/u);
    expect(config).toContain('Enable_RQUOTA = false;');
  });

  it('skips the grace period and keeps recovery state in the given directory', () => {
    const config = ganeshaConfig(options);
    expect(config).toContain('Graceless = true;');
    expect(config).toContain('RecoveryRoot = "/tmp/x/rec";');
  });

  it('exports the directory read-write through the VFS backend under the pseudo path', () => {
    const config = ganeshaConfig(options);
    expect(config).toContain('Path = "/tmp/x/export";');
    expect(config).toContain('Pseudo = "/export";');
    expect(config).toContain('Access_Type = RW;');
    expect(config).toContain('Name = VFS;');
  });

  it('refuses values it cannot quote and relative pseudo paths', () => {
    expect(() => ganeshaConfig({ ...options, exportDir: '/tmp/a"b' })).toThrow(/unsupported character/u);
    expect(() => ganeshaConfig({ ...options, pseudoPath: 'export' })).toThrow(/absolute/u);
    expect(() => ganeshaConfig({ ...options, port: 0 })).toThrow(/invalid port/u);
  });
});
