import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { applyManifests, renderKustomization } from '../src/manifests.ts';
import { uniqueName, useTestEnv } from '../src/testing.ts';
import { temporaryDir } from './support/temporary-dir.ts';

const env = useTestEnv();
const core = env.kubeConfig.makeApiClient(CoreV1Api);

async function kustomization(namespace: string, configMapData: string): Promise<string> {
  const dir = await temporaryDir('kustomize-');
  await writeFile(join(dir, 'kustomization.yaml'), `namespace: ${namespace}\nresources: [objects.yaml]\n`);
  await writeFile(
    join(dir, 'objects.yaml'),
    `apiVersion: v1\nkind: Namespace\nmetadata: {name: ${namespace}}\n---\n` +
      `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: ${configMapData}\n`,
  );
  return dir;
}

describe('deployment manifests', () => {
  it('render a kustomization with the namespace applied', async () => {
    const objects = await renderKustomization(await kustomization('rendered', '{a: b}'));
    expect(objects.map((object) => [object.kind, object.metadata?.namespace])).toEqual([
      ['Namespace', undefined],
      ['ConfigMap', 'rendered'],
    ]);
  });

  it('dry-run namespaced objects without storing them', async () => {
    const namespace = uniqueName('dry-run');
    await applyManifests(
      env.kubeConfig,
      await renderKustomization(await kustomization(namespace, '{a: b}')),
      {
        dryRun: true,
      },
    );
    const configMaps = await core.listNamespacedConfigMap({ namespace });
    expect(configMaps.items.map((item) => item.metadata?.name)).not.toContain('settings');
    await core.deleteNamespace({ name: namespace });
  });

  it('apply for real, converging when applied again', async () => {
    const namespace = uniqueName('apply');
    const objects = await renderKustomization(await kustomization(namespace, '{a: b}'));
    await applyManifests(env.kubeConfig, objects);
    await applyManifests(env.kubeConfig, objects);
    const configMap = await core.readNamespacedConfigMap({ namespace, name: 'settings' });
    expect(configMap.data).toEqual({ a: 'b' });
    await core.deleteNamespace({ name: namespace });
  });

  it('name the object the API server refuses', async () => {
    const namespace = uniqueName('refused');
    const objects = await renderKustomization(await kustomization(namespace, '{a: [not, a, string]}'));
    await expect(applyManifests(env.kubeConfig, objects, { dryRun: true })).rejects.toThrow(
      `ConfigMap ${namespace}/settings was refused`,
    );
    await core.deleteNamespace({ name: namespace });
  });
});
