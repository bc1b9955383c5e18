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
    const [first, second] = loadAllYaml(exportAsHostPath(input, '/srv/export')) as [unknown, V1Deployment];
    expect(first).toEqual(account);
    expect(second.spec?.template.spec?.volumes).toEqual([
      { name: 'root', hostPath: { path: '/srv/export', type: 'Directory' } },
      { name: 'other', emptyDir: {} },
    ]);
    expect(second.spec?.template.spec?.containers).toEqual(deployment.spec?.template.spec?.containers);
  });
});
