import { createKubeApi, ProvisionController, type Provisioner } from '@kube-provisioner/controller';

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

const controller = new ProvisionController({
  api: createKubeApi(), // as kubectl: KUBECONFIG, ~/.kube/config, else the pod's service account
  provisionerName: 'example.com/my-provisioner',
  provisioner,
});
const stop = new AbortController();
process.once('SIGTERM', () => stop.abort());
await controller.run(stop.signal); // runs until SIGTERM, through API outages; settles after a graceful stop
