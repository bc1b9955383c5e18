import { UsageError } from '@kube-provisioner/controller/cli';
import { describe, expect, it } from 'vitest';
import { parseCliOptions } from '../src/cli-options.ts';

const pod = {
  NODE_NAME: 'node-a',
  POD_NAMESPACE: 'kube-provisioner-hostpath',
  POD_NAME: 'hp-x',
  POD_UID: 'u-1',
};
const capacityName = 'hostpath.kube-provisioner.io';

describe('capacity publishing options', () => {
  it('publish by default only per node under a name a CSIDriver can carry (no "/")', () => {
    expect(parseCliOptions([], pod).publishCapacity).toBe(false);
    expect(parseCliOptions([`--provisioner-name=${capacityName}`], pod).publishCapacity).toBe(true);
    expect(
      parseCliOptions(['--mode=shared', `--provisioner-name=${capacityName}`], pod).publishCapacity,
    ).toBe(false);
  });

  it('follow PUBLISH_CAPACITY and CAPACITY_INTERVAL, and read the Pod from the downward API', () => {
    const env = { ...pod, PUBLISH_CAPACITY: 'true', CAPACITY_INTERVAL: '15s' };
    expect(parseCliOptions([], env)).toMatchObject({
      publishCapacity: true,
      capacityIntervalMs: 15_000,
      pod: { namespace: 'kube-provisioner-hostpath', name: 'hp-x', uid: 'u-1' },
    });
    expect(
      parseCliOptions([`--provisioner-name=${capacityName}`, '--publish-capacity=false'], pod),
    ).toMatchObject({
      publishCapacity: false,
    });
  });

  it('refuse publishing without a namespace, in shared mode, or with an unknown value', () => {
    expect(() => parseCliOptions([`--provisioner-name=${capacityName}`], { NODE_NAME: 'node-a' })).toThrow(
      /POD_NAMESPACE/,
    );
    expect(() => parseCliOptions(['--mode=shared', '--publish-capacity=true'], pod)).toThrow(UsageError);
    expect(() => parseCliOptions(['--publish-capacity=yes'], pod)).toThrow(/true, false or auto/);
  });
});
