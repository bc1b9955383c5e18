import { createKubeApi, ProvisionController, type Provisioner } from '@kube-provisioner/controller';
import { KubeConfig } from '@kubernetes/client-node';

const provisioner: Provisioner = {
  async provision({ pvName, pvc, storageClass }) {
    // create the asset (idempotently), then return the PV to save
    return {
      pv: {
        metadata: { name: pvName },
        spec: {
          capacity: { storage: pvc.spec?.resources?.requests?.storage ?? '1Gi' },
          accessModes: [...(pvc.spec?.accessModes ?? ['ReadWriteOnce'])],
          persistentVolumeReclaimPolicy: storageClass.reclaimPolicy ?? 'Delete',
          hostPath: { path: `/srv/volumes/${pvName}` },
        },
      },
    };
  },
  async delete(_pv) {
    // remove the asset behind the PV
  },
};

const kubeConfig = new KubeConfig();
kubeConfig.loadFromDefault();
const controller = new ProvisionController({
  api: createKubeApi(kubeConfig),
  provisionerName: 'example.com/my-provisioner',
  provisioner,
});
const stop = new AbortController();
process.once('SIGTERM', () => stop.abort());
await controller.run(stop.signal); // runs until SIGTERM, through API outages; settles after a graceful stop
