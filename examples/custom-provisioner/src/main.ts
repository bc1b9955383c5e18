/** Entry point: `PROVISIONER_NAME` and `ROOT` configure the provisioner; SIGTERM stops it gracefully. */
import { createKubeApi, isLeaderElectionLostError, ProvisionController } from '@kube-provisioner/controller';
import { KubeConfig } from '@kubernetes/client-node';
import { DirectoryProvisioner } from './directory-provisioner.ts';

const kubeConfig = new KubeConfig();
kubeConfig.loadFromDefault();
const controller = new ProvisionController({
  api: createKubeApi(kubeConfig),
  provisionerName: process.env.PROVISIONER_NAME ?? 'example.com/directory',
  provisioner: new DirectoryProvisioner(process.env.ROOT ?? '/var/lib/directory-provisioner'),
  addFinalizer: true,
});
const stop = new AbortController();
process.once('SIGTERM', () => stop.abort());
process.once('SIGINT', () => stop.abort());
try {
  await controller.run(stop.signal);
} catch (err) {
  // Like the Go library, exit non-zero on a lost Lease so the pod restarts and campaigns again.
  console.error(isLeaderElectionLostError(err) ? 'leader election lost' : err);
  process.exitCode = 1;
}
