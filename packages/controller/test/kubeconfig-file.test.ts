import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { kubeconfigFileCredentials } from '../src/client/kubeconfig-file.ts';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kubeconfig-file-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A kubeconfig in YAML, as kubectl writes it, with one context `main`. */
function kubeconfigYaml(cluster: string, user: string): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    'current-context: main',
    'clusters:',
    '- name: c',
    '  cluster:',
    cluster,
    'users:',
    '- name: u',
    '  user:',
    user,
    'contexts:',
    '- name: main',
    '  context: {cluster: c, user: u}',
    '',
  ].join('\n');
}

async function write(name: string, text: string): Promise<string> {
  const file = join(dir, name);
  await writeFile(file, text);
  return file;
}

describe('kubeconfigFileCredentials with static credentials', () => {
  it('reads CA data, and certificate and key files relative to the kubeconfig, with the TLS options', async () => {
    await mkdir(join(dir, 'pki'));
    await write('pki/client.crt', 'CERT PEM');
    await write('pki/client.key', 'KEY PEM');
    const file = await write(
      'config',
      kubeconfigYaml(
        [
          '    server: https://api.example:6443/',
          `    certificate-authority-data: ${Buffer.from('CA PEM').toString('base64')}`,
          '    insecure-skip-tls-verify: true',
          '    tls-server-name: kubernetes',
        ].join('\n'),
        ['    client-certificate: pki/client.crt', '    client-key: pki/client.key', '    as: admin'].join(
          '\n',
        ),
      ),
    );
    const credentials = await kubeconfigFileCredentials([file]);
    expect(credentials.server).toBe('https://api.example:6443');
    expect(credentials.proxied).toBe(false);
    const tls = await credentials.tls();
    expect({ ...tls, ca: String(tls.ca), cert: String(tls.cert), key: String(tls.key) }).toEqual({
      ca: 'CA PEM',
      cert: 'CERT PEM',
      key: 'KEY PEM',
      rejectUnauthorized: false,
      servername: 'kubernetes',
    });
    expect(await credentials.headers()).toEqual({ 'impersonate-user': 'admin' });
  });

  it('reads a token file relative to the kubeconfig on each call, so a rotated token is used', async () => {
    await write('token', 'before\n');
    const file = await write(
      'config',
      kubeconfigYaml('    server: https://api.example:6443', '    tokenFile: token'),
    );
    const credentials = await kubeconfigFileCredentials([file]);
    expect(await credentials.headers()).toEqual({ authorization: 'Bearer before' });
    await write('token', 'after');
    expect(await credentials.headers()).toEqual({ authorization: 'Bearer after' });
  });

  it('sends basic auth over a token when both are set, as client-node does', async () => {
    const file = await write(
      'config',
      kubeconfigYaml(
        '    server: https://api.example:6443',
        ['    token: t', '    username: alice', '    password: secret'].join('\n'),
      ),
    );
    const credentials = await kubeconfigFileCredentials([file]);
    expect(await credentials.headers()).toEqual({
      authorization: `Basic ${Buffer.from('alice:secret').toString('base64')}`,
    });
  });

  it('refuses plain HTTP unless TLS verification is skipped, as client-node does', async () => {
    const file = await write('config', kubeconfigYaml('    server: http://api.example:8080', '    token: t'));
    await expect((await kubeconfigFileCredentials([file])).tls()).rejects.toThrow(
      /HTTP protocol is not allowed/u,
    );
  });

  it('rejects a name defined in two files, and names the entry that misses a field', async () => {
    const config = kubeconfigYaml('    server: https://api.example:6443', '    token: t');
    const first = await write('first', config);
    const second = await write('second', config);
    await expect(kubeconfigFileCredentials([first, second])).rejects.toThrow('Duplicate cluster: c');
    const broken = await write(
      'broken',
      kubeconfigYaml('    insecure-skip-tls-verify: true', '    token: t'),
    );
    await expect(kubeconfigFileCredentials([broken])).rejects.toThrow(
      'clusters[0].cluster.server is missing',
    );
  });

  it('fails without a current context naming a known cluster', async () => {
    const file = await write('config', 'apiVersion: v1\nkind: Config\nclusters: []\n');
    await expect(kubeconfigFileCredentials([file])).rejects.toThrow('kubeconfig has no current cluster');
  });
});

/** A kubeconfig whose user runs an exec plugin (Node.js printing an `ExecCredential` with `token`). */
async function execKubeconfig(token: string): Promise<string> {
  const plugin = await write(
    'plugin.mjs',
    `console.log(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token: '${token}' } }));`,
  );
  return write(
    'exec-config',
    kubeconfigYaml(
      '    server: https://api.example:6443',
      [
        '    exec:',
        '      apiVersion: client.authentication.k8s.io/v1',
        `      command: ${JSON.stringify(process.execPath)}`,
        `      args: [${JSON.stringify(plugin)}]`,
        '      interactiveMode: Never',
      ].join('\n'),
    ),
  );
}

describe('kubeconfigFileCredentials with an exec plugin', () => {
  it('runs the plugin through client-node and sends the token it prints', async () => {
    const credentials = await kubeconfigFileCredentials([await execKubeconfig('from-plugin')]);
    expect(await credentials.headers()).toMatchObject({ Authorization: 'Bearer from-plugin' });
  });
});

describe('what a provisioner run with a kubeconfig file loads', () => {
  /** The URLs of client-node and undici modules a child process loads while it resolves `file`'s credentials. */
  function loadedBy(file: string): string[] {
    const script = `
      import { registerHooks } from 'node:module';
      const loaded = [];
      registerHooks({
        resolve(specifier, context, next) {
          const result = next(specifier, context);
          if (result.url.includes('/@kubernetes/client-node/') || result.url.includes('/undici/')) loaded.push(result.url);
          return result;
        },
      });
      const { kubeconfigFileCredentials } = await import('./src/client/kubeconfig-file.ts');
      const credentials = await kubeconfigFileCredentials([${JSON.stringify(file)}]);
      await credentials.tls();
      await credentials.headers();
      console.log(JSON.stringify(loaded));
    `;
    const child = spawnSync(
      process.execPath,
      ['--conditions=@kube-provisioner/source', '--input-type=module', '-e', script],
      { cwd: join(import.meta.dirname, '..'), encoding: 'utf8' },
    );
    expect(child.stderr).toBe('');
    return JSON.parse(child.stdout) as string[];
  }

  it('loads neither client-node nor undici for a token, and client-node for a plugin', async () => {
    const token = await write(
      'token',
      kubeconfigYaml('    server: https://api.example:6443', '    token: t'),
    );
    expect(loadedBy(token)).toEqual([]);
    const plugin = await execKubeconfig('from-plugin');
    expect(loadedBy(plugin).some((url) => url.includes('/@kubernetes/client-node/'))).toBe(true);
  });
});
