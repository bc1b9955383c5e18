/**
 * Applies a node roots file (`--roots-config`) again whenever its content changes, without a
 * restart. A ConfigMap volume is updated by kubelet swapping a `..data` symlink, so the file is
 * read again on a short interval rather than watched: a read of a small file costs nothing, and
 * every way the file can change (swap, rewrite, remount) is seen the same.
 */
import { readFile as nodeReadFile } from 'node:fs/promises';
import type { Logger } from '@kube-provisioner/controller';
import type { KubeObject } from '@kube-provisioner/controller/client';
import type { EventRecorder } from '@kube-provisioner/controller/events';
import { Counter, Gauge, type Registry } from 'prom-client';
import { parseNodeRootsConfig, rootsOfNode } from './node-roots-config.ts';
import type { NamedRoot } from './root-placement.ts';
import type { RootSetChange } from './root-set-provisioner.ts';

/** Normal Event reason on the provisioner's Pod when a changed node roots file is applied. */
export const reasonNodeRootsApplied = 'NodeRootsApplied';

/** Warning Event reason on the provisioner's Pod when a changed node roots file is refused. */
export const reasonNodeRootsRefused = 'NodeRootsRefused';

/** Options of {@link NodeRootsReload}. */
export interface NodeRootsReloadOptions {
  /** The node roots file. */
  readonly path: string;
  /** This node: its entry of the file applies, else the default one. */
  readonly nodeName: string;
  /** The file's content as applied at start: a read finding the same does nothing. */
  readonly applied: string;
  /**
   * Makes `roots` this node's, and `retired` its roots that take no new volume, or throws, changing
   * nothing (a root inside a retired one, two roots on one file system).
   */
  apply(roots: readonly NamedRoot[], retired: readonly NamedRoot[]): Promise<RootSetChange>;
  readonly logger: Logger;
  /** Where the Events go, and the Pod they are about; without them changes are only logged and counted. */
  readonly events?: { readonly recorder: Pick<EventRecorder, 'event'>; readonly pod: KubeObject } | undefined;
  /** Registry of `kube_provisioner_node_roots_*`. */
  readonly registry: Registry;
  /** Reads the file; tests substitute one. Default: `fs.promises.readFile` as UTF-8. */
  readonly readFile?: ((path: string) => Promise<string>) | undefined;
}

/** The outcome of one {@link NodeRootsReload.check}. */
export type NodeRootsCheck = 'unchanged' | 'applied' | 'refused';

/** Reads the node roots file again and applies a changed one; a refused one leaves the roots as they were. */
export class NodeRootsReload {
  readonly #options: NodeRootsReloadOptions;
  readonly #reloads: Counter<'result'>;
  readonly #valid: Gauge;
  /** The content last read, applied or refused: the same content is not tried twice. */
  #seen: string;
  #running: Promise<NodeRootsCheck> | undefined;

  constructor(options: NodeRootsReloadOptions) {
    this.#options = options;
    this.#seen = options.applied;
    this.#reloads = new Counter({
      name: 'kube_provisioner_node_roots_reloads_total',
      help: 'Changes of the node roots file, by result: applied, or refused (the roots stayed as they were).',
      labelNames: ['result'],
      registers: [options.registry],
    });
    this.#valid = new Gauge({
      name: 'kube_provisioner_node_roots_config_valid',
      help: 'Whether the node roots file as last read is applied (1) or was refused (0).',
      registers: [options.registry],
    });
    this.#valid.set(1);
  }

  /** Reads the file and applies it if it changed; one check at a time, a call during one joins it. */
  check(): Promise<NodeRootsCheck> {
    this.#running ??= this.#check().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  /** Checks every `intervalMs` for the life of the process (the timer keeps no process alive). */
  start(intervalMs: number): void {
    setInterval(() => void this.check(), intervalMs).unref();
  }

  async #check(): Promise<NodeRootsCheck> {
    const { path, nodeName, logger } = this.#options;
    let text: string;
    try {
      text = await (this.#options.readFile ?? ((file) => nodeReadFile(file, 'utf8')))(path);
    } catch (err) {
      // Between kubelet's steps the file is always there; not being able to read it is worth a line, not a refusal.
      logger.warn({ err, path }, 'reading the node roots file failed; the roots stay as they are');
      return 'unchanged';
    }
    if (text === this.#seen) return 'unchanged';
    this.#seen = text;
    try {
      const { entry, roots, retired } = rootsOfNode(parseNodeRootsConfig(text), nodeName);
      const change = await this.#options.apply(roots, retired);
      const summary = [
        roots.map((root) => `${root.name}=${root.path}`).join(',') || 'none',
        ...(retired.length === 0
          ? []
          : [`(retired ${retired.map((root) => `${root.name}=${root.path}`).join(',')})`]),
      ].join(' ');
      logger.info(
        { path, entry, roots: summary, added: change.added, retired: change.retired },
        'node roots file changed: roots applied',
      );
      this.#record('Normal', reasonNodeRootsApplied, `node roots file ${path} applied: roots ${summary}`);
      this.#reloads.inc({ result: 'applied' });
      this.#valid.set(1);
      return 'applied';
    } catch (err) {
      const message = `node roots file ${path} refused, the roots stay as they were: ${(err as Error).message}`;
      logger.error({ path }, message);
      this.#record('Warning', reasonNodeRootsRefused, message);
      this.#reloads.inc({ result: 'refused' });
      this.#valid.set(0);
      return 'refused';
    }
  }

  #record(type: 'Normal' | 'Warning', reason: string, message: string): void {
    const { events } = this.#options;
    events?.recorder.event(events.pod, type, reason, message);
  }
}
