import { generateKeyPair } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { runCommand } from './command.ts';

/** Paths of the certificates and keys of one control plane. */
export interface PkiFiles {
  readonly caCert: string;
  readonly caKey: string;
  /** Serving pair of kube-apiserver, also used by the controller-manager and scheduler. */
  readonly servingCert: string;
  readonly servingKey: string;
  /** Client pair of `CN=admin, O=system:masters`. */
  readonly adminCert: string;
  readonly adminKey: string;
  /** ServiceAccount token signing key and its public half. */
  readonly serviceAccountKey: string;
  readonly serviceAccountPub: string;
  /**
   * Client pair of `CN=kube-apiserver-kubelet-client`: kube-apiserver's identity towards a real
   * node's kubelet (`kubectl logs`, `exec`), authorized there by a binding to `system:kubelet-api-admin`.
   */
  readonly kubeletClientCert: string;
  readonly kubeletClientKey: string;
}

/** File names under `dir`. */
export function pkiFiles(dir: string): PkiFiles {
  return {
    caCert: join(dir, 'ca.crt'),
    caKey: join(dir, 'ca.key'),
    servingCert: join(dir, 'apiserver.crt'),
    servingKey: join(dir, 'apiserver.key'),
    adminCert: join(dir, 'admin.crt'),
    adminKey: join(dir, 'admin.key'),
    serviceAccountKey: join(dir, 'sa.key'),
    serviceAccountPub: join(dir, 'sa.pub'),
    kubeletClientCert: join(dir, 'apiserver-kubelet-client.crt'),
    kubeletClientKey: join(dir, 'apiserver-kubelet-client.key'),
  };
}

const generateRsa = promisify(generateKeyPair);
const openssl = (args: string[]): Promise<string> =>
  runCommand('openssl', args, {
    missingHint: 'kube-testenv creates the control-plane certificates with openssl 3',
  });

async function writeKeyPair(privatePath: string, publicPath?: string): Promise<void> {
  const { privateKey, publicKey } = await generateRsa('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  await writeFile(privatePath, privateKey, { mode: 0o600 });
  if (publicPath) await writeFile(publicPath, publicKey);
}

/** A self-signed serving pair for `127.0.0.1` and `localhost`, valid one day. */
export interface LoopbackServingPair {
  /** PEM private key path. */
  readonly key: string;
  /** PEM certificate path. */
  readonly cert: string;
}

/** Writes a {@link LoopbackServingPair} into `dir`: for a loopback TLS server in a test or benchmark. */
export async function createLoopbackServingPair(dir: string): Promise<LoopbackServingPair> {
  const pair = { key: join(dir, 'loopback.key'), cert: join(dir, 'loopback.crt') };
  await mkdir(dir, { recursive: true });
  await openssl([
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-days',
    '1',
    '-subj',
    '/CN=127.0.0.1',
    '-addext',
    'subjectAltName=IP:127.0.0.1,DNS:localhost',
    '-keyout',
    pair.key,
    '-out',
    pair.cert,
  ]);
  return pair;
}

/**
 * Creates a CA, the serving and admin certificates it signs, and the ServiceAccount key pair. Valid
 * for ten years: a state directory may outlive a test run.
 */
export async function createPki(dir: string): Promise<PkiFiles> {
  const files = pkiFiles(dir);
  await mkdir(dir, { recursive: true });
  await Promise.all([
    writeKeyPair(files.caKey),
    writeKeyPair(files.servingKey),
    writeKeyPair(files.adminKey),
    writeKeyPair(files.serviceAccountKey, files.serviceAccountPub),
    writeKeyPair(files.kubeletClientKey),
  ]);
  const days = ['-days', '3650'];
  await openssl([
    'req',
    '-x509',
    '-new',
    '-key',
    files.caKey,
    '-out',
    files.caCert,
    ...days,
    '-subj',
    '/CN=kube-testenv-ca',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  const signed = (key: string, cert: string, subject: string, ...extensions: string[]): Promise<string> =>
    openssl([
      'req',
      '-x509',
      '-new',
      '-key',
      key,
      '-out',
      cert,
      ...days,
      '-subj',
      subject,
      '-CA',
      files.caCert,
      '-CAkey',
      files.caKey,
      ...extensions.flatMap((ext) => ['-addext', ext]),
    ]);
  await Promise.all([
    signed(
      files.servingKey,
      files.servingCert,
      '/CN=kube-apiserver',
      'basicConstraints=critical,CA:FALSE',
      'keyUsage=critical,digitalSignature,keyEncipherment',
      'extendedKeyUsage=serverAuth',
      // Go checks the SAN, never the CN; the in-cluster names and first service IP are for completeness.
      'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,IP:10.0.0.1',
    ),
    signed(
      files.adminKey,
      files.adminCert,
      '/O=system:masters/CN=admin',
      'basicConstraints=critical,CA:FALSE',
      'keyUsage=critical,digitalSignature,keyEncipherment',
      'extendedKeyUsage=clientAuth',
    ),
    signed(
      files.kubeletClientKey,
      files.kubeletClientCert,
      '/CN=kube-apiserver-kubelet-client',
      'basicConstraints=critical,CA:FALSE',
      'keyUsage=critical,digitalSignature,keyEncipherment',
      'extendedKeyUsage=clientAuth',
    ),
  ]);
  return files;
}
