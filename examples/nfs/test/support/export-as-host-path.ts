/**
 * A Helm post-renderer for the chart on a test node whose kernel has no NFS client: the kubelet
 * cannot mount the chart's `nfs:` volume, so the provisioner's Deployment gets the exported directory
 * as a `hostPath` instead (the same directory the NFS server exports). Nothing else of the rendering
 * changes. Helm 4 runs post-renderers as plugins; {@link hostPathExportPlugin} makes one.
 */
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { dumpYaml, type KubernetesObject, loadAllYaml, type V1Deployment } from '@kubernetes/client-node';

/** The environment variable that names the directory to mount instead of the NFS export. */
const exportDirVariable = 'REAL_NODE_EXPORT_DIR';
const pluginName = 'export-as-host-path';

/** Replaces every Deployment's `nfs:` volume with a `hostPath` of `exportDir`. */
export function exportAsHostPath(manifests: string, exportDir: string): string {
  const objects = (loadAllYaml(manifests) as (KubernetesObject | null)[]).filter((o) => o !== null);
  for (const object of objects) {
    if (object.kind !== 'Deployment') continue;
    for (const volume of (object as V1Deployment).spec?.template.spec?.volumes ?? []) {
      if (volume.nfs === undefined) continue;
      delete volume.nfs;
      volume.hostPath = { path: exportDir, type: 'Directory' };
    }
  }
  return objects.map((object) => `---\n${dumpYaml(object)}`).join('');
}

/** A Helm plugin directory holding the post-renderer, and the environment that makes helm use it. */
export interface HostPathExportPlugin {
  /** Add to helm's environment. */
  readonly env: Readonly<Record<string, string>>;
  /** The value of `helm install/upgrade --post-renderer`. */
  readonly name: string;
  remove(): Promise<void>;
}

/** Writes the post-renderer as a Helm 4 plugin into a temporary `HELM_PLUGINS` directory. */
export async function hostPathExportPlugin(exportDir: string): Promise<HostPathExportPlugin> {
  const plugins = await mkdtemp(join(tmpdir(), 'helm-plugins-'));
  const dir = join(plugins, pluginName);
  await mkdir(dir);
  await writeFile(
    join(dir, 'plugin.yaml'),
    [
      'apiVersion: v1',
      'type: postrenderer/v1',
      `name: ${pluginName}`,
      'version: 0.1.0',
      'runtime: subprocess',
      'runtimeConfig:',
      '  platformCommand:',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: Helm expands it, not JavaScript.
      '    - command: ${HELM_PLUGIN_DIR}/render.sh',
      '',
    ].join('\n'),
  );
  // This module, run by the Node.js running the tests (the system's may be older).
  const script = `#!/bin/sh\nexec '${process.execPath}' '${fileURLToPath(import.meta.url)}'\n`;
  await writeFile(join(dir, 'render.sh'), script);
  await chmod(join(dir, 'render.sh'), 0o755);
  return {
    env: { HELM_PLUGINS: plugins, [exportDirVariable]: exportDir },
    name: pluginName,
    remove: () => rm(plugins, { recursive: true, force: true }),
  };
}

if (import.meta.main) {
  const exportDir = process.env[exportDirVariable];
  if (!exportDir) throw new Error(`${exportDirVariable} is not set`);
  let input = '';
  process.stdin.setEncoding('utf8');
  for await (const chunk of process.stdin) input += String(chunk);
  process.stdout.write(exportAsHostPath(input, exportDir));
}
