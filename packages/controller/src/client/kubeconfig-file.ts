/**
 * Kubeconfig files read without client-node. js-yaml (client-node's own parser, so the same files
 * parse) reads them, and the current context's static credentials become {@link ClusterCredentials}
 * here: the CA (file or data), client certificate and key, token or token file, basic auth,
 * impersonation, `insecure-skip-tls-verify` and `tls-server-name`. A context whose user runs a plugin
 * (`exec`, `auth-provider`) or whose cluster has a `proxy-url` is handed to client-node's `KubeConfig`,
 * which implements them: only then is client-node loaded (its configuration module imports every
 * generated API, about 60 MiB of a process's idle memory).
 */
import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, join } from 'node:path';
import { type ClusterCredentials, keepAlivePool, kubeConfigCredentials } from './cluster-credentials.ts';

/** A cluster entry, with its file paths resolved against the kubeconfig that named it. */
interface KubeconfigCluster {
  readonly name: string;
  readonly server: string;
  readonly caData: string | undefined;
  readonly caFile: string | undefined;
  readonly skipTLSVerify: boolean;
  readonly tlsServerName: string | undefined;
  readonly proxied: boolean;
}

/** A user entry, with its file paths resolved against the kubeconfig that named it. */
interface KubeconfigUser {
  readonly name: string;
  readonly certData: string | undefined;
  readonly certFile: string | undefined;
  readonly keyData: string | undefined;
  readonly keyFile: string | undefined;
  readonly token: string | undefined;
  readonly tokenFile: string | undefined;
  readonly username: string | undefined;
  readonly password: string | undefined;
  readonly impersonate: string | undefined;
  /** `exec` or `auth-provider`: a plugin client-node runs. */
  readonly plugin: boolean;
}

interface KubeconfigContext {
  readonly name: string;
  readonly cluster: string;
  readonly user: string | undefined;
}

/** The merged entries of one or more kubeconfig files. */
interface Kubeconfig {
  readonly clusters: KubeconfigCluster[];
  readonly users: KubeconfigUser[];
  readonly contexts: KubeconfigContext[];
  currentContext: string | undefined;
}

type Entry = Readonly<Record<string, unknown>>;

/**
 * The credentials of the current context of kubeconfig `files`, merged as kubectl merges the files
 * of `KUBECONFIG`: the first file that names a current context wins (client-node's own
 * `loadFromDefault` lets the last one win); a name defined twice is an error, as in client-node.
 */
export async function kubeconfigFileCredentials(files: readonly string[]): Promise<ClusterCredentials> {
  const config: Kubeconfig = { clusters: [], users: [], contexts: [], currentContext: undefined };
  for (const file of files) merge(config, await readKubeconfig(file));
  const context = findNamed(config.contexts, config.currentContext);
  const cluster = context && findNamed(config.clusters, context.cluster);
  if (cluster === undefined) throw new Error('kubeconfig has no current cluster');
  const user = findNamed(config.users, context?.user);
  if (cluster.proxied || user?.plugin) return clientNodeCredentials(files);
  return staticCredentials(cluster, user);
}

/** One kubeconfig file's entries, validated as client-node validates them. */
async function readKubeconfig(file: string): Promise<Kubeconfig> {
  const { load } = await import('js-yaml');
  const document = (load(await readFile(file, 'utf8')) ?? {}) as Entry;
  const directory = dirname(file);
  const path = (value: unknown): string | undefined =>
    typeof value === 'string' && value !== ''
      ? isAbsolute(value)
        ? value
        : join(directory, value)
      : undefined;
  const clusters = entries(document.clusters).map((entry, index) => {
    const cluster = required(entry.cluster, `clusters[${index}].cluster`);
    const server = required(cluster.server, `clusters[${index}].cluster.server`);
    return {
      name: name(entry, `clusters[${index}]`),
      server: String(server).replace(/\/$/u, ''),
      caData: text(cluster['certificate-authority-data']),
      caFile: path(cluster['certificate-authority']),
      skipTLSVerify: cluster['insecure-skip-tls-verify'] === true,
      tlsServerName: text(cluster['tls-server-name']),
      proxied: Boolean(cluster['proxy-url']),
    };
  });
  const users = entries(document.users).map((entry, index) => {
    const user = (entry.user ?? {}) as Entry;
    return {
      name: name(entry, `users[${index}]`),
      certData: text(user['client-certificate-data']),
      certFile: path(user['client-certificate']),
      keyData: text(user['client-key-data']),
      keyFile: path(user['client-key']),
      token: text(user.token),
      tokenFile: path(user.tokenFile ?? user['token-file']),
      username: text(user.username),
      password: text(user.password),
      impersonate: text(user.as),
      plugin: Boolean(user.exec) || Boolean(user['auth-provider']),
    };
  });
  const contexts = entries(document.contexts).map((entry, index) => {
    const context = required(entry.context, `contexts[${index}].context`);
    return {
      name: name(entry, `contexts[${index}]`),
      cluster: String(required(context.cluster, `contexts[${index}].context.cluster`)),
      user: text(context.user),
    };
  });
  return { clusters, users, contexts, currentContext: text(document['current-context']) };
}

function merge(into: Kubeconfig, from: Kubeconfig): void {
  into.currentContext ??= from.currentContext;
  for (const [kind, target, source] of [
    ['cluster', into.clusters, from.clusters],
    ['user', into.users, from.users],
    ['context', into.contexts, from.contexts],
  ] as const) {
    for (const item of source) {
      if (target.some((known) => known.name === item.name))
        throw new Error(`Duplicate ${kind}: ${item.name}`);
      (target as { name: string }[]).push(item);
    }
  }
}

function entries(value: unknown): Entry[] {
  return Array.isArray(value) ? (value as Entry[]) : [];
}

function required(value: unknown, what: string): Entry {
  if (!value) throw new Error(`${what} is missing`);
  return value as Entry;
}

function name(entry: Entry, what: string): string {
  return String(required(entry.name, `${what}.name`));
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function findNamed<T extends { readonly name: string }>(
  list: readonly T[],
  wanted: string | undefined,
): T | undefined {
  return wanted === undefined ? undefined : list.find((item) => item.name === wanted);
}

/** A file's bytes, else base64 data, as client-node's `bufferFromFileOrString`. */
async function fileOrData(file: string | undefined, data: string | undefined): Promise<Buffer | undefined> {
  if (file !== undefined) return readFile(file);
  return data === undefined ? undefined : Buffer.from(data, 'base64');
}

function staticCredentials(cluster: KubeconfigCluster, user: KubeconfigUser | undefined): ClusterCredentials {
  return {
    server: cluster.server,
    proxied: false,
    async tls() {
      if (cluster.server.startsWith('http:') && !cluster.skipTLSVerify) {
        throw new Error('HTTP protocol is not allowed when skipTLSVerify is not set or false');
      }
      const [ca, cert, key] = await Promise.all([
        fileOrData(cluster.caFile, cluster.caData),
        fileOrData(user?.certFile, user?.certData),
        fileOrData(user?.keyFile, user?.keyData),
      ]);
      return {
        ...(ca && { ca }),
        ...(cert && { cert }),
        ...(key && { key }),
        ...(cluster.skipTLSVerify && { rejectUnauthorized: false }),
        ...(cluster.tlsServerName !== undefined && { servername: cluster.tlsServerName }),
      };
    },
    async headers() {
      const headers: Record<string, string> = {};
      if (user === undefined) return headers;
      if (user.impersonate !== undefined) headers['impersonate-user'] = user.impersonate;
      // Read on every call (the connection caches headers for a minute), so a rotated token file is
      // picked up, as client-go's cached file token source does.
      const token = user.token ?? (user.tokenFile && (await readFile(user.tokenFile, 'utf8')).trim());
      if (token) headers.authorization = `Bearer ${token}`;
      // client-node sends basic auth over a token when both are set.
      if (user.username !== undefined) {
        const basic = Buffer.from(`${user.username}:${user.password ?? ''}`).toString('base64');
        headers.authorization = `Basic ${basic}`;
      }
      return headers;
    },
    dispatcher: keepAlivePool,
  };
}

/** The files through client-node's `KubeConfig`, for the plugins and proxies it implements. */
async function clientNodeCredentials(files: readonly string[]): Promise<ClusterCredentials> {
  const { KubeConfig } = await import('@kubernetes/client-node');
  const kubeConfig = new KubeConfig();
  for (const [index, file] of files.entries()) {
    if (index === 0) kubeConfig.loadFromFile(file);
    else {
      const more = new KubeConfig();
      more.loadFromFile(file);
      kubeConfig.mergeConfig(more, Boolean(kubeConfig.getCurrentContext()));
    }
  }
  return kubeConfigCredentials(kubeConfig);
}
