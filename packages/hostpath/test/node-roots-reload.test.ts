import { createLogger } from '@kube-provisioner/controller/logging';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { NodeRootsReload } from '../src/node-roots-reload.ts';
import type { NamedRoot } from '../src/root-placement.ts';
import { configMapVolume } from './configmap-volume.ts';

const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'hostpath-abc', namespace: 'ns' } };

const config = (nodePathMap: unknown) => JSON.stringify({ nodePathMap });
const first = config([{ node: 'node-a', paths: ['/mnt/fast'] }]);

/** A reload of `node-a` over a ConfigMap volume, recording what it applies, logs and tells. */
async function reloadOver(initial = first, refuse?: (roots: readonly NamedRoot[]) => string | undefined) {
  const volume = await configMapVolume('config.json', initial);
  const applied: string[][] = [];
  const events: string[] = [];
  const errors: string[] = [];
  const registry = new Registry();
  const reload = new NodeRootsReload({
    path: volume.file,
    nodeName: 'node-a',
    applied: initial,
    apply: async (roots, retired) => {
      const reason = refuse?.(roots);
      if (reason !== undefined) throw new Error(reason);
      applied.push([
        ...roots.map((root) => `${root.name}=${root.path}`),
        ...retired.map((root) => `retired ${root.name}=${root.path}`),
      ]);
      return { added: [], retired: [] };
    },
    logger: createLogger({
      level: 'error',
      write: (line) => errors.push((JSON.parse(line) as { msg: string }).msg),
    }),
    events: {
      recorder: {
        event: (object, type, reason, message) =>
          events.push(`${object.metadata?.name} ${type} ${reason}: ${message}`),
      },
      pod,
    },
    registry,
  });
  const metrics = async () => {
    const text = await registry.metrics();
    return text.split('\n').filter((line) => line.startsWith('kube_provisioner_node_roots_'));
  };
  return { volume, reload, applied, events, errors, metrics };
}

describe('reloading the node roots file', () => {
  it("applies the node's entry once the ConfigMap volume swaps in a new version, and only then", async () => {
    const { volume, reload, applied, events, metrics } = await reloadOver();
    await using _ = volume;
    expect(await reload.check()).toBe('unchanged');
    expect(applied).toEqual([]);

    await volume.update(
      config([
        { node: 'node-a', paths: ['/mnt/fast', 'bulk:hdd=/mnt/hdd', { path: '/mnt/old', retired: true }] },
      ]),
    );
    expect(await reload.check()).toBe('applied');
    expect(applied).toEqual([['fast=/mnt/fast', 'bulk=/mnt/hdd', 'retired old=/mnt/old']]);
    expect(events).toEqual([
      `hostpath-abc Normal NodeRootsApplied: node roots file ${volume.file} applied: roots fast=/mnt/fast,bulk=/mnt/hdd (retired old=/mnt/old)`,
    ]);
    expect(await reload.check()).toBe('unchanged');
    expect(applied).toHaveLength(1);
    expect(await metrics()).toEqual([
      'kube_provisioner_node_roots_reloads_total{result="applied"} 1',
      'kube_provisioner_node_roots_config_valid 1',
    ]);
  });

  it('falls back to the default entry when the node is taken out of the file, and to no root without one', async () => {
    const { volume, reload, applied } = await reloadOver();
    await using _ = volume;
    await volume.update(
      config([
        { node: 'DEFAULT_PATH_FOR_NON_LISTED_NODES', paths: ['/opt/local-path-provisioner'] },
        { node: 'node-b', paths: ['/data1'] },
      ]),
    );
    expect(await reload.check()).toBe('applied');
    await volume.update(config([{ node: 'node-b', paths: ['/data1'] }]));
    expect(await reload.check()).toBe('applied');
    expect(applied).toEqual([['local-path-provisioner=/opt/local-path-provisioner'], []]);
  });

  it('refuses an invalid file with an error line, a Warning Event and the metric, keeps the roots, and applies the next valid one', async () => {
    const { volume, reload, applied, events, errors, metrics } = await reloadOver();
    await using _ = volume;
    await volume.update('{"nodePathMap": [{"node": "node-a", "paths": ["opt"]}]}');
    expect(await reload.check()).toBe('refused');
    const message = `node roots file ${volume.file} refused, the roots stay as they were: a path on node node-a must be absolute and not /, got "opt"`;
    expect(errors).toEqual([message]);
    expect(events).toEqual([`hostpath-abc Warning NodeRootsRefused: ${message}`]);
    expect(applied).toEqual([]);
    expect(await metrics()).toEqual([
      'kube_provisioner_node_roots_reloads_total{result="refused"} 1',
      'kube_provisioner_node_roots_config_valid 0',
    ]);
    // The same content is not refused again on every read.
    expect(await reload.check()).toBe('unchanged');
    expect(events).toHaveLength(1);

    await volume.update(config([{ node: 'node-a', paths: ['/mnt/new'] }]));
    expect(await reload.check()).toBe('applied');
    expect(applied).toEqual([['new=/mnt/new']]);
    expect((await metrics()).at(-1)).toBe('kube_provisioner_node_roots_config_valid 1');
  });

  it('refuses roots the provisioner cannot take, with its reason', async () => {
    const { volume, reload, events } = await reloadOver(first, (roots) =>
      roots.some((root) => root.path === '/mnt/fast/inner') ? 'inside the retired root fast' : undefined,
    );
    await using _ = volume;
    await volume.update(config([{ node: 'node-a', paths: ['/mnt/fast/inner'] }]));
    expect(await reload.check()).toBe('refused');
    expect(events).toEqual([
      `hostpath-abc Warning NodeRootsRefused: node roots file ${volume.file} refused, the roots stay as they were: inside the retired root fast`,
    ]);
  });
});
