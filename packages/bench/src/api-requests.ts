/**
 * Requests kube-apiserver has served, from its `apiserver_request_total` counter: every client's,
 * the provisioner's and kube-controller-manager's alike (the counter has no client label), so a
 * difference between two readings shows what the whole cluster did meanwhile.
 */
import https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';

/** Request counts by `"<VERB> <resource>[/<subresource>]"`, summed over response codes and scopes. */
export type RequestCounts = ReadonlyMap<string, number>;

const sample = /^apiserver_request_total\{([^}]*)\} (\S+)$/;
const label = /(\w+)="((?:[^"\\]|\\.)*)"/g;

/** The counts in a Prometheus text exposition of kube-apiserver's metrics. */
export function parseRequestCounts(text: string): RequestCounts {
  const counts = new Map<string, number>();
  for (const line of text.split('\n')) {
    const match = sample.exec(line);
    if (match === null) continue;
    const labels = new Map([...(match[1] ?? '').matchAll(label)].map((m) => [m[1], m[2]]));
    const subresource = labels.get('subresource');
    const key = `${labels.get('verb')} ${labels.get('resource')}${subresource ? `/${subresource}` : ''}`;
    counts.set(key, (counts.get(key) ?? 0) + Number(match[2]));
  }
  return counts;
}

/** What was served between two readings; keys with no new requests are left out. */
export function requestsBetween(before: RequestCounts, after: RequestCounts): RequestCounts {
  const served = new Map<string, number>();
  for (const [key, count] of after) {
    const added = count - (before.get(key) ?? 0);
    if (added > 0) served.set(key, added);
  }
  return served;
}

/** Reads the counts from the `/metrics` of `kubeConfig`'s current cluster. */
export async function readRequestCounts(kubeConfig: KubeConfig): Promise<RequestCounts> {
  const server = kubeConfig.getCurrentCluster()?.server;
  if (server === undefined) throw new Error('the kubeconfig names no current cluster');
  const options: https.RequestOptions = {};
  await kubeConfig.applyToHTTPSOptions(options);
  const text = await new Promise<string>((resolve, reject) => {
    const request = https.get(new URL('/metrics', server), options, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        body += chunk;
      });
      response.on('end', () => {
        if (response.statusCode === 200) resolve(body);
        else reject(new Error(`GET /metrics answered ${response.statusCode}: ${body.slice(0, 200)}`));
      });
      response.on('error', reject);
    });
    request.on('error', reject);
  });
  return parseRequestCounts(text);
}
