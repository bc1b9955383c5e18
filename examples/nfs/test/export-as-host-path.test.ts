import { dumpYaml, loadAllYaml, type V1Deployment } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { exportAsHostPath } from './support/export-as-host-path.ts';

const deployment: V1Deployment = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'nfs' },
  spec: {
    selector: { matchLabels: { app: 'nfs' } },
    template: {
      metadata: { labels: { app: 'nfs' } },
      spec: {
        containers: [
          { name: 'c', image: 'i', volumeMounts: [{ name: 'root', mountPath: '/persistentvolumes' }] },
        ],
        volumes: [
          { name: 'root', nfs: { server: '10.0.0.5', path: '/export' } },
          { name: 'other', emptyDir: {} },
        ],
      },
    },
  },
};

describe('the real-node post-renderer', () => {
  it('gives the Deployment the exported directory as a hostPath and changes nothing else', () => {
    const account = { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'nfs' } };
    const input = `# Source: a\n---\n${dumpYaml(account)}---\n${dumpYaml(deployment)}`;
    const [first, second] = loadAllYaml(exportAsHostPath(input, { '10.0.0.5:/export': '/srv/export' })) as [
      unknown,
      V1Deployment,
    ];
    expect(first).toEqual(account);
    expect(second.spec?.template.spec?.volumes).toEqual([
      { name: 'root', hostPath: { path: '/srv/export', type: 'Directory' } },
      { name: 'other', emptyDir: {} },
    ]);
    expect(second.spec?.template.spec?.containers).toEqual(deployment.spec?.template.spec?.containers);
  });

  it('gives each export its own directory, and refuses an export it has none for', () => {
    const two = structuredClone(deployment);
    two.spec?.template.spec?.volumes?.push({ name: 'b', nfs: { server: 'nfs-b.invalid', path: '/b' } });
    const dirs = { '10.0.0.5:/export': '/srv/export', 'nfs-b.invalid:/b': '/srv/b' };
    const [rendered] = loadAllYaml(exportAsHostPath(dumpYaml(two), dirs)) as [V1Deployment];
    expect(rendered.spec?.template.spec?.volumes?.map((v) => v.hostPath?.path)).toEqual([
      '/srv/export',
      undefined,
      '/srv/b',
    ]);
    expect(() => exportAsHostPath(dumpYaml(two), { '10.0.0.5:/export': '/srv/export' })).toThrow(
      'no directory for export nfs-b.invalid:/b',
    );
  });
});
