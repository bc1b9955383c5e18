/**
 * The kubelet's identity: a client certificate of the control plane's CA for `system:node:<name>` in
 * `system:nodes`, which the Node authorizer and the NodeRestriction admission plugin recognise, and
 * a kubeconfig that uses it.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { runCommand } from '../command.ts';
import type { PkiFiles } from '../pki.ts';

/** The kubelet's client pair. */
export interface KubeletCredentials {
  readonly cert: string;
  readonly key: string;
}

/** The Kubernetes user name of the kubelet of node `name`. */
export function nodeUser(name: string): string {
  return `system:node:${name}`;
}

/** Writes the kubelet's client pair for node `name` into `dir`, signed by the control plane's CA. */
export async function createKubeletCredentials(
  dir: string,
  pki: PkiFiles,
  name: string,
): Promise<KubeletCredentials> {
  const credentials = { cert: join(dir, 'kubelet-client.crt'), key: join(dir, 'kubelet-client.key') };
  await runCommand(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '3650',
      '-subj',
      `/O=system:nodes/CN=${nodeUser(name)}`,
      '-addext',
      'basicConstraints=critical,CA:FALSE',
      '-addext',
      'keyUsage=critical,digitalSignature',
      '-addext',
      'extendedKeyUsage=clientAuth',
      '-CA',
      pki.caCert,
      '-CAkey',
      pki.caKey,
      '-keyout',
      credentials.key,
      '-out',
      credentials.cert,
    ],
    { missingHint: 'kube-testenv creates the certificates with openssl 3' },
  );
  return credentials;
}

/** Writes the kubelet's kubeconfig: the control plane at `server`, trusted through its CA. */
export async function writeKubeletKubeconfig(
  path: string,
  server: string,
  caCert: string,
  credentials: KubeletCredentials,
  name: string,
): Promise<void> {
  const [ca, cert, key] = await Promise.all(
    [caCert, credentials.cert, credentials.key].map((file) => readFile(file, 'base64')),
  );
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'kube-testenv', server, caData: ca, skipTLSVerify: false }],
    users: [{ name: nodeUser(name), certData: cert, keyData: key }],
    contexts: [{ name: 'kubelet', cluster: 'kube-testenv', user: nodeUser(name) }],
    currentContext: 'kubelet',
  });
  await writeFile(path, kubeConfig.exportConfig(), { mode: 0o600 });
}
