/**
 * A Helm post-renderer for the chart on a test node whose kernel has no NFS client: the kubelet
 * cannot mount the chart's `nfs:` volume, so the provisioner's Deployment gets the exported directory
 * as a `hostPath` instead (the same directory the NFS server exports), each export by its
 * `server:path`. Nothing else of the rendering changes. Helm 4 runs post-renderers as plugins;
 * {@link hostPathExportPlugin} makes one.
 */
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { dumpYaml, type KubernetesObject, loadAllYaml, type V1Deployment } from '@kubernetes/client-node';

/** The environment variable holding the directories to mount instead of the NFS exports (JSON). */
const exportDirsVariable = 'REAL_NODE_EXPORT_DIRS';
const pluginName = 'export-as-host-path';

/** The directory to mount in place of each export, by `<server>:<path>`. */
export type ExportDirectories = Readonly<Record<string, string>>;

/**
 * Replaces every Deployment's `nfs:` volume with a `hostPath` of its export's directory.
 *
 * @throws for an export `exportDirs` lacks.
 */
export function exportAsHostPath(manifests: string, exportDirs: ExportDirectories): string {
  const objects = (loadAllYaml(manifests) as (KubernetesObject | null)[]).filter((o) => o !== null);
  for (const object of objects) {
    if (object.kind !== 'Deployment') continue;
    for (const volume of (object as V1Deployment).spec?.template.spec?.volumes ?? []) {
      if (volume.nfs === undefined) continue;
      const exportDir = exportDirs[`${volume.nfs.server}:${volume.nfs.path}`];
      if (exportDir === undefined)
        throw new Error(`no directory for export ${volume.nfs.server}:${volume.nfs.path}`);
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
export async function hostPathExportPlugin(exportDirs: ExportDirectories): Promise<HostPathExportPlugin> {
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
    env: { HELM_PLUGINS: plugins, [exportDirsVariable]: JSON.stringify(exportDirs) },
    name: pluginName,
    remove: () => rm(plugins, { recursive: true, force: true }),
  };
}

if (import.meta.main) {
  const exportDirs = process.env[exportDirsVariable];
  if (!exportDirs) throw new Error(`${exportDirsVariable} is not set`);
  let input = '';
  process.stdin.setEncoding('utf8');
  for await (const chunk of process.stdin) input += String(chunk);
  process.stdout.write(exportAsHostPath(input, JSON.parse(exportDirs) as ExportDirectories));
}
