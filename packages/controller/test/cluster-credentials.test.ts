import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { defaultCredentials } from '../src/client/default-credentials.ts';
import { inClusterCredentials } from '../src/client/in-cluster-credentials.ts';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'credentials-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const service = { KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' };

async function serviceAccount(token: string): Promise<string> {
  const account = join(dir, 'serviceaccount');
  await mkdir(account, { recursive: true });
  await writeFile(join(account, 'token'), token);
  await writeFile(join(account, 'ca.crt'), 'CA PEM');
  return account;
}

function kubeconfig(context: string, server: string, token: string): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    'current-context': context,
    clusters: [{ name: context, cluster: { server } }],
    users: [{ name: context, user: { token } }],
    contexts: [{ name: context, context: { cluster: context, user: context } }],
  });
}

describe('inClusterCredentials', () => {
  it('reads the server from the service variables, and the CA and token from the account directory', async () => {
    const directory = await serviceAccount('token-1\n');
    const credentials = inClusterCredentials({ env: service, directory });
    expect(credentials.server).toBe('https://10.96.0.1:443');
    expect(credentials.proxied).toBe(false);
    expect(String((await credentials.tls()).ca)).toBe('CA PEM');
    expect(await credentials.headers()).toEqual({ authorization: 'Bearer token-1' });
  });

  it('reads the token again on each call, so a rotated projected token is used', async () => {
    const directory = await serviceAccount('before');
    const credentials = inClusterCredentials({ env: service, directory });
    expect(await credentials.headers()).toEqual({ authorization: 'Bearer before' });
    await writeFile(join(directory, 'token'), 'after');
    expect(await credentials.headers()).toEqual({ authorization: 'Bearer after' });
  });

  it('brackets an IPv6 service host and uses plain HTTP on the well-known insecure ports', () => {
    expect(
      inClusterCredentials({ env: { KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '443' } })
        .server,
    ).toBe('https://[fd00::1]:443');
    expect(
      inClusterCredentials({ env: { KUBERNETES_SERVICE_HOST: 'api', KUBERNETES_SERVICE_PORT: '8080' } })
        .server,
    ).toBe('http://api:8080');
  });

  it('says what is missing outside a pod', () => {
    expect(() => inClusterCredentials({ env: {} })).toThrow(
      /KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT/u,
    );
  });
});

describe('defaultCredentials, in kubectl order', () => {
  it('uses the files of KUBECONFIG, the first current context winning', async () => {
    const first = join(dir, 'first');
    const second = join(dir, 'second');
    await writeFile(first, kubeconfig('one', 'https://one.example:6443', 't1'));
    await writeFile(second, kubeconfig('two', 'https://two.example:6443', 't2'));
    const credentials = await defaultCredentials({
      env: { KUBECONFIG: [first, second].join(delimiter), ...service },
      home: dir,
      directory: await serviceAccount('pod-token'),
    });
    expect(credentials.server).toBe('https://one.example:6443');
    expect(await credentials.headers()).toEqual({ authorization: 'Bearer t1' });
  });

  it('uses ~/.kube/config when KUBECONFIG is unset, before the service account', async () => {
    await mkdir(join(dir, '.kube'));
    await writeFile(join(dir, '.kube', 'config'), kubeconfig('home', 'https://home.example:6443', 'th'));
    const credentials = await defaultCredentials({
      env: service,
      home: dir,
      directory: await serviceAccount('pod-token'),
    });
    expect(credentials.server).toBe('https://home.example:6443');
  });

  it('falls back to the service account, and fails naming the three sources when there is none', async () => {
    const credentials = await defaultCredentials({
      env: service,
      home: dir,
      directory: await serviceAccount('pod-token'),
    });
    expect(await credentials.headers()).toEqual({ authorization: 'Bearer pod-token' });
    await expect(defaultCredentials({ env: {}, home: dir, directory: join(dir, 'none') })).rejects.toThrow(
      /set KUBECONFIG, create .*\.kube\/config, or run in a pod with a service account/u,
    );
  });
});

describe('what a provisioner in its pod loads', () => {
  it('imports the front door and makes an in-cluster client without loading @kubernetes/client-node', () => {
    // A child process, so the record covers every module the import graph pulls in.
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
      const { createKubeApi } = await import('@kube-provisioner/controller');
      const { resources } = await import('@kube-provisioner/controller/client');
      const api = createKubeApi('in-cluster');
      api.resource(resources.persistentVolumes);
      console.log(JSON.stringify(loaded));
    `;
    const child = spawnSync(
      process.execPath,
      ['--conditions=@kube-provisioner/source', '--input-type=module', '-e', script],
      {
        cwd: join(import.meta.dirname, '..'),
        encoding: 'utf8',
        env: { ...process.env, ...service },
      },
    );
    expect(child.stderr).toBe('');
    expect(JSON.parse(child.stdout)).toEqual([]);
  });
});
