import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

/** Result of one health request. */
export interface HealthResult {
  readonly ok: boolean;
  readonly status: number;
  readonly body: string;
}

/**
 * GETs a health endpoint once. `https` endpoints are verified against `caPem`; 2xx means healthy.
 * Connection errors reject.
 */
export function probeHealth(url: string, caPem: string | undefined, timeoutMs = 5000): Promise<HealthResult> {
  return new Promise((resolve, reject) => {
    const request = url.startsWith('https:') ? httpsRequest(url, { ca: caPem }) : httpRequest(url);
    request.setTimeout(timeoutMs, () =>
      request.destroy(new Error(`no answer from ${url} in ${timeoutMs}ms`)),
    );
    request.on('error', reject);
    request.on('response', (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        body += chunk;
      });
      response.on('end', () => {
        const status = response.statusCode ?? 0;
        resolve({ ok: status >= 200 && status < 300, status, body });
      });
    });
    request.end();
  });
}
