/**
 * One small HTTP server for Prometheus metrics and Kubernetes probes:
 * - `/metrics`: the given prom-client registries merged, plus Node process metrics when asked;
 * - `/healthz`: 200 unless a health check fails (e.g. leader election's stuck-leader check);
 * - `/readyz`: 200 once every readiness check passes (e.g. informer caches synced).
 *
 * Probe bodies follow the API server's `/healthz?verbose` style, one `[+]name ok` or
 * `[-]name failed: reason` line per check, so a failing probe says which check failed.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { collectDefaultMetrics, Registry } from 'prom-client';

// Not `import … from 'node:http'`: the ES module facade of node:http reads every export, and one
// lazily loads Node's bundled undici, which costs a process 14 MiB and 0.1 s of CPU it never uses.
const { createServer } = process.getBuiltinModule('node:http');

/** A probe check: passes when it returns (or resolves), fails when it throws (or rejects). */
export type Check = () => void | Promise<void>;

/** Options of {@link HealthServer}. */
export interface HealthServerOptions {
  /** Listen address. Default `0.0.0.0`. */
  address?: string;
  /** Listen port; 0 picks a free one. Default 0. */
  port?: number;
  /** Default `/metrics`. */
  metricsPath?: string;
  /** Default `/healthz`. */
  healthzPath?: string;
  /** Default `/readyz`. */
  readyzPath?: string;
  /** Registries served on the metrics path; their metric names must not collide. */
  registries?: readonly Registry[];
  /** Also serve `process_*` and `nodejs_*` metrics, collected on a registry of this server. Default false. */
  processMetrics?: boolean;
}

type Probe = 'health' | 'readiness';

/** Serves metrics and probes; never exits the process. */
export class HealthServer {
  readonly #options: Required<Omit<HealthServerOptions, 'registries' | 'processMetrics'>>;
  readonly #registries: readonly Registry[];
  readonly #checks: Record<Probe, Map<string, Check>> = { health: new Map(), readiness: new Map() };
  #server: Server | undefined;

  constructor(options: HealthServerOptions = {}) {
    this.#options = {
      address: options.address ?? '0.0.0.0',
      port: options.port ?? 0,
      metricsPath: options.metricsPath ?? '/metrics',
      healthzPath: options.healthzPath ?? '/healthz',
      readyzPath: options.readyzPath ?? '/readyz',
    };
    const registries = [...(options.registries ?? [])];
    if (options.processMetrics) {
      const processRegistry = new Registry();
      collectDefaultMetrics({ register: processRegistry });
      registries.push(processRegistry);
    }
    this.#registries = registries;
  }

  /** Adds a check to `/healthz`; a check of the same name is replaced. */
  addHealthCheck(name: string, check: Check): void {
    this.#checks.health.set(name, check);
  }

  /** Adds a check to `/readyz`; a check of the same name is replaced. */
  addReadinessCheck(name: string, check: Check): void {
    this.#checks.readiness.set(name, check);
  }

  /** Starts listening; resolves with the bound port. */
  async listen(): Promise<number> {
    if (this.#server !== undefined) throw new Error('health server is already listening');
    const server = createServer((req, res) => {
      this.#handle(req, res).catch((err: unknown) => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
        res.end(`internal error: ${errorMessage(err)}\n`);
      });
    });
    this.#server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.#options.port, this.#options.address, () => {
        server.off('error', reject);
        resolve();
      });
    }).catch((err: unknown) => {
      this.#server = undefined;
      throw err;
    });
    return (server.address() as AddressInfo).port;
  }

  /** Stops accepting connections, closes idle ones and resolves when in-flight requests are done. */
  async close(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    if (server === undefined) return;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    await closed;
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    const { metricsPath, healthzPath, readyzPath } = this.#options;
    if (path !== metricsPath && path !== healthzPath && path !== readyzPath) {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found\n');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' });
      res.end('method not allowed\n');
      return;
    }
    if (path === metricsPath) {
      // Merged per scrape, so metrics registered after start are served too.
      const merged = this.#registries.length === 0 ? new Registry() : Registry.merge([...this.#registries]);
      const body = await merged.metrics();
      res.writeHead(200, { 'content-type': merged.contentType }).end(body);
      return;
    }
    const probe: Probe = path === healthzPath ? 'health' : 'readiness';
    const { ok, report } = await runChecks(this.#checks[probe]);
    const name = probe === 'health' ? 'healthz' : 'readyz';
    res.writeHead(ok ? 200 : 500, { 'content-type': 'text/plain; charset=utf-8' });
    res.end(`${report}${name} check ${ok ? 'passed' : 'failed'}\n`);
  }
}

async function runChecks(checks: ReadonlyMap<string, Check>): Promise<{ ok: boolean; report: string }> {
  const results = await Promise.all(
    [...checks].map(async ([name, check]) => {
      try {
        await check();
        return { ok: true, line: `[+]${name} ok\n` };
      } catch (err) {
        return { ok: false, line: `[-]${name} failed: ${errorMessage(err)}\n` };
      }
    }),
  );
  return { ok: results.every((r) => r.ok), report: results.map((r) => r.line).join('') };
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
