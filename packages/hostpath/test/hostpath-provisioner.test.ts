// biome-ignore-all lint/suspicious/noTemplateCurlyInString: pathPattern placeholders are literal text, not JS templates
import { existsSync } from 'node:fs';
import { mkdir, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { isIgnoredError } from '@kube-provisioner/controller';
import { nodeFsOps, permissionFix } from '@kube-provisioner/safe-fs';
import { describe, expect, it } from 'vitest';
import { annVolumeType } from '../src/class-parameters.ts';
import { HostPathProvisioner, type HostPathProvisionerOptions } from '../src/hostpath-provisioner.ts';
import { annOnDelete, annProvisionerIdentity } from '../src/persistent-volume.ts';
import {
  claim,
  context,
  failed,
  nodeReader,
  provisioned,
  provisionOptions,
  released,
  storageClass,
  temporaryRoot,
} from './fixtures.ts';

function perNode(root: string, extra: Partial<HostPathProvisionerOptions> = {}): HostPathProvisioner {
  return new HostPathProvisioner({ mode: 'per-node', root, nodeName: 'node-a', ...extra });
}

function shared(root: string): HostPathProvisioner {
  return new HostPathProvisioner({ mode: 'shared', root });
}

describe('HostPathProvisioner configuration', () => {
  it('refuses per-node mode without a node name', () => {
    expect(() => new HostPathProvisioner({ mode: 'per-node', root: '/srv' })).toThrow(/node name/);
  });

  it('refuses a relative root or the filesystem root', () => {
    expect(() => shared('srv/volumes')).toThrow();
    expect(() => shared('/')).toThrow(/must not be \//);
  });
});

describe('per-node provisioning', () => {
  it('creates <root>/<pvName> and returns a hostPath PV pinned to its node', async () => {
    await using root = await temporaryRoot();
    const pvc = claim({ node: 'node-a' });
    const sc = storageClass(undefined, { reclaimPolicy: 'Retain', mountOptions: ['noatime'] });
    const options = provisionOptions(pvc, sc);
    const pv = provisioned(await perNode(root.path).provision(options, context));

    const path = join(root.path, options.pvName);
    expect((await stat(path)).isDirectory()).toBe(true);
    expect(pv).toEqual({
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: {
        name: options.pvName,
        annotations: { [annOnDelete]: 'delete', [annProvisionerIdentity]: 'node-a' },
      },
      spec: {
        capacity: { storage: '1Gi' },
        accessModes: ['ReadWriteOnce'],
        persistentVolumeReclaimPolicy: 'Retain',
        volumeMode: 'Filesystem',
        mountOptions: ['noatime'],
        hostPath: { path, type: 'Directory' },
        nodeAffinity: {
          required: {
            nodeSelectorTerms: [
              { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['node-a'] }] },
            ],
          },
        },
      },
    });
  });

  it('gives the directory mode 0777 by default and the class mode when set', async () => {
    await using root = await temporaryRoot();
    const provisioner = perNode(root.path);
    const first = provisionOptions(claim({ node: 'node-a' }));
    const second = provisionOptions(claim({ node: 'node-a' }), storageClass({ mode: '0750' }));
    provisioned(await provisioner.provision(first, context));
    provisioned(await provisioner.provision(second, context));
    expect((await stat(join(root.path, first.pvName))).mode & 0o7777).toBe(0o777);
    expect((await stat(join(root.path, second.pvName))).mode & 0o7777).toBe(0o750);
  });

  it('returns a local PV when the class asks for it', async () => {
    await using root = await temporaryRoot();
    const options = provisionOptions(claim({ node: 'node-a' }), storageClass({ volumeType: 'local' }));
    const pv = provisioned(await perNode(root.path).provision(options, context));
    expect(pv.spec?.local).toEqual({ path: join(root.path, options.pvName) });
    expect(pv.spec?.hostPath).toBeUndefined();
    expect(pv.spec?.nodeAffinity).toEqual({
      required: {
        nodeSelectorTerms: [
          { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['node-a'] }] },
        ],
      },
    });
  });

  it('returns a local PV when the claim asks and the class allows it', async () => {
    await using root = await temporaryRoot();
    const pvc = claim({ node: 'node-a', annotations: { [annVolumeType]: 'local' } });
    const options = provisionOptions(pvc, storageClass({ allowVolumeTypeAnnotation: 'true' }));
    const pv = provisioned(await perNode(root.path).provision(options, context));
    expect(pv.spec?.local?.path).toBe(join(root.path, options.pvName));
  });

  it('uses the node label value for a custom affinity key', async () => {
    await using root = await temporaryRoot();
    const provisioner = perNode(root.path, {
      nodeAffinityKey: 'topology.example.com/host',
      nodes: nodeReader({ 'node-a': { 'topology.example.com/host': 'rack1-host7' } }),
    });
    const pv = provisioned(await provisioner.provision(provisionOptions(claim({ node: 'node-a' })), context));
    expect(pv.spec?.nodeAffinity?.required?.nodeSelectorTerms[0]?.matchExpressions).toEqual([
      { key: 'topology.example.com/host', operator: 'In', values: ['rack1-host7'] },
    ]);
    expect(pv.metadata?.annotations?.[annProvisionerIdentity]).toBe('node-a');
  });

  it('fails clearly when the node lacks the custom affinity label', async () => {
    await using root = await temporaryRoot();
    const provisioner = perNode(root.path, {
      nodeAffinityKey: 'topology.example.com/host',
      nodes: nodeReader({ 'node-a': {} }),
    });
    const options = provisionOptions(claim({ node: 'node-a' }));
    const error = failed(await provisioner.provision(options, context), false);
    expect(error.message).toContain('has no label topology.example.com/host');
    expect(existsSync(join(root.path, options.pvName))).toBe(false);
  });

  it('removes what it created when a chmod fails, and reports the permission error as infeasible with the root and the fix', async () => {
    await using root = await temporaryRoot();
    const denied = Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES', errno: -13 });
    const provisioner = perNode(root.path, { fs: { ...nodeFsOps, fchmod: () => Promise.reject(denied) } });
    const options = provisionOptions(
      claim({ node: 'node-a' }),
      storageClass({ pathPattern: 'nested/${.PV.name}' }),
    );
    const error = failed(await provisioner.provision(options, context), true);
    expect(error.message).toMatch(/^chmod "nested": permission denied \(EACCES\) in /u);
    expect(error.message).toContain(`in ${root.path} as uid ${process.getuid?.()}`);
    expect(error.message).toContain(permissionFix);
    expect(await readdir(root.path)).toEqual([]);
  });

  it('refuses a volume below a directory it did not make, whose owner could swap the volume for a link', async () => {
    await using root = await temporaryRoot();
    await mkdir(join(root.path, 'legacy-app'));
    const byAnnotation = storageClass({ pathPattern: '${.PVC.annotations.dir}' });
    const provisioner = perNode(root.path);

    const legacy = claim({ node: 'node-a', annotations: { dir: 'legacy-app/x' } });
    const error = failed(await provisioner.provision(provisionOptions(legacy, byAnnotation), context), false);
    const own = claim({ node: 'node-a', name: 'own', uid: 'u-own', annotations: { dir: 'apps/x' } });
    const pv = provisioned(await provisioner.provision(provisionOptions(own, byAnnotation), context));

    expect(error.message).toContain('was not made by this provisioner as a parent');
    expect(await readdir(join(root.path, 'legacy-app'))).toEqual([]);
    expect(pv.spec?.hostPath?.path ?? pv.spec?.local?.path).toBe(join(root.path, 'apps/x'));
  });

  it('is idempotent for the same claim', async () => {
    await using root = await temporaryRoot();
    const provisioner = perNode(root.path);
    const options = provisionOptions(claim({ node: 'node-a' }));
    const first = provisioned(await provisioner.provision(options, context));
    const second = provisioned(await provisioner.provision(options, context));
    expect(second).toEqual(first);
  });

  it('takes only claims scheduled to its own node', () => {
    const provisioner = perNode('/srv/volumes');
    expect(provisioner.shouldProvision(claim({ node: 'node-a' }))).toBe(true);
    expect(provisioner.shouldProvision(claim({ node: 'node-b' }))).toBe(false);
    expect(shared('/srv/volumes').shouldProvision(claim({ node: 'node-b' }))).toBe(true);
  });

  it('ignores a claim for another node without touching the disk', async () => {
    await using root = await temporaryRoot();
    const result = await perNode(root.path).provision(provisionOptions(claim({ node: 'node-b' })), context);
    expect('error' in result && isIgnoredError(result.error)).toBe(true);
    expect(await readdir(root.path)).toEqual([]);
  });

  it('refuses a claim without a selected node, pointing at WaitForFirstConsumer', async () => {
    await using root = await temporaryRoot();
    const error = failed(await perNode(root.path).provision(provisionOptions(claim()), context), true);
    expect(error.message).toContain('WaitForFirstConsumer');
    expect(await readdir(root.path)).toEqual([]);
  });

  it.each(['ReadWriteMany', 'ReadOnlyMany'])('refuses %s with a clear message', async (mode) => {
    await using root = await temporaryRoot();
    const pvc = claim({ node: 'node-a', accessModes: ['ReadWriteOnce', mode] });
    const error = failed(await perNode(root.path).provision(provisionOptions(pvc), context), true);
    expect(error.message).toContain(`access mode ${mode} is not supported in per-node mode`);
    expect(await readdir(root.path)).toEqual([]);
  });

  it('fails on an invalid class parameter, naming it, before creating anything', async () => {
    await using root = await temporaryRoot();
    const options = provisionOptions(claim({ node: 'node-a' }), storageClass({ volumeType: 'nfs' }));
    const error = failed(await perNode(root.path).provision(options, context), true);
    expect(error.message).toContain('parameter "volumeType": accepted values: hostPath, local');
    expect(await readdir(root.path)).toEqual([]);
  });
});

describe('shared provisioning', () => {
  it('serves any node: no node affinity, access modes as requested', async () => {
    await using root = await temporaryRoot();
    const options = provisionOptions(claim({ accessModes: ['ReadWriteMany'] }));
    const pv = provisioned(await shared(root.path).provision(options, context));
    expect(pv.spec?.nodeAffinity).toBeUndefined();
    expect(pv.spec?.accessModes).toEqual(['ReadWriteMany']);
    expect(pv.metadata?.annotations).toEqual({ [annOnDelete]: 'delete' });
    expect((await stat(join(root.path, options.pvName))).isDirectory()).toBe(true);
  });

  it('refuses local volumes, which require node affinity', async () => {
    await using root = await temporaryRoot();
    const options = provisionOptions(claim(), storageClass({ volumeType: 'local' }));
    const error = failed(await shared(root.path).provision(options, context), true);
    expect(error.message).toContain('shared mode');
  });
});

describe('deleting', () => {
  it('removes the directory of a released volume and tolerates a repeat', async () => {
    await using root = await temporaryRoot();
    const provisioner = perNode(root.path);
    const pvc = claim({ node: 'node-a' });
    const options = provisionOptions(pvc);
    const pv = released(provisioned(await provisioner.provision(options, context)), pvc);
    await mkdir(join(root.path, options.pvName, 'nested'));

    expect(await provisioner.shouldDelete(pv, context)).toBe(true);
    await provisioner.delete(pv, context);
    expect(existsSync(join(root.path, options.pvName))).toBe(false);
    await provisioner.delete(pv, context);
  });

  it('gives nested directories the class mode and removes emptied parents, keeping shared ones', async () => {
    await using root = await temporaryRoot();
    const provisioner = perNode(root.path);
    const sc = storageClass({ pathPattern: '${.PVC.namespace}/${.PVC.name}', mode: '0750' });
    const [one, two] = [claim({ node: 'node-a' }), claim({ node: 'node-a' })];
    const pvOne = released(provisioned(await provisioner.provision(provisionOptions(one, sc), context)), one);
    const pvTwo = released(provisioned(await provisioner.provision(provisionOptions(two, sc), context)), two);
    expect((await stat(join(root.path, 'team-a'))).mode & 0o7777).toBe(0o750);
    expect((await stat(pvOne.spec?.hostPath?.path ?? '')).mode & 0o7777).toBe(0o750);

    await provisioner.delete(pvOne, context);
    expect(existsSync(pvOne.spec?.hostPath?.path ?? '')).toBe(false);
    expect(existsSync(pvTwo.spec?.hostPath?.path ?? '')).toBe(true);
    await provisioner.delete(pvTwo, context);
    expect(await readdir(root.path)).toEqual([]);
  });

  it('routes by the recorded node even when the affinity value differs (custom key)', async () => {
    await using root = await temporaryRoot();
    const nodes = nodeReader({ 'node-a': { zone: 'z1' }, 'node-b': { zone: 'z1' } });
    const owner = perNode(root.path, { nodeAffinityKey: 'zone', nodes });
    const peer = perNode(root.path, { nodeName: 'node-b', nodeAffinityKey: 'zone', nodes });
    const pvc = claim({ node: 'node-a' });
    const pv = released(provisioned(await owner.provision(provisionOptions(pvc), context)), pvc);

    expect(await owner.shouldDelete(pv, context)).toBe(true);
    expect(await peer.shouldDelete(pv, context)).toBe(false);
    await expect(peer.delete(pv, context)).rejects.toSatisfy(isIgnoredError);
    expect(existsSync(pv.spec?.hostPath?.path ?? '')).toBe(true);
  });

  it('lets a peer release the volume of a vanished node without touching any disk', async () => {
    await using root = await temporaryRoot();
    const gone = perNode(root.path, { nodeName: 'node-gone' });
    const peer = perNode(root.path, { nodes: nodeReader({ 'node-a': {} }) });
    const pvc = claim({ node: 'node-gone' });
    const pv = released(provisioned(await gone.provision(provisionOptions(pvc), context)), pvc);

    expect(await peer.shouldDelete(pv, context)).toBe(true);
    await peer.delete(pv, context);
    // Same temp root for both instances: the directory proves the peer did not touch it.
    expect(existsSync(pv.spec?.hostPath?.path ?? '')).toBe(true);
  });

  it('leaves a bound volume of another node alone without asking the API', async () => {
    const provisioner = perNode('/srv/volumes', {
      nodes: { get: () => Promise.reject(new Error('must not be called')) },
    });
    const pv = {
      metadata: { annotations: { [annProvisionerIdentity]: 'node-b' } },
      status: { phase: 'Bound' },
    };
    expect(await provisioner.shouldDelete(pv, context)).toBe(false);
  });

  it('refuses a PV whose path lies outside the root and touches nothing', async () => {
    await using root = await temporaryRoot();
    await using outside = await temporaryRoot();
    const provisioner = perNode(root.path);
    const pvc = claim({ node: 'node-a' });
    const pv = released(provisioned(await provisioner.provision(provisionOptions(pvc), context)), pvc);
    for (const path of [outside.path, `${root.path}/../${outside.path.split('/').pop()}`, root.path]) {
      const forged = { ...pv, spec: { ...pv.spec, hostPath: { path, type: 'Directory' } } };
      await expect(provisioner.delete(forged, context)).rejects.toThrow();
    }
    expect(existsSync(outside.path)).toBe(true);
    expect(existsSync(pv.spec?.hostPath?.path ?? '')).toBe(true);
  });

  it('deletes every volume it provisioned in shared mode', async () => {
    await using root = await temporaryRoot();
    const provisioner = shared(root.path);
    const pvc = claim();
    const pv = released(provisioned(await provisioner.provision(provisionOptions(pvc), context)), pvc);
    expect(await provisioner.shouldDelete(pv, context)).toBe(true);
    await provisioner.delete(pv, context);
    expect(await readdir(root.path)).toEqual([]);
  });
});
