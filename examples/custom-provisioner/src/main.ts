/**
 * Entry point: `PROVISIONER_NAME` and `ROOT` configure the provisioner; `--help` lists the shared flags
 * (`--kubeconfig`, `--kube-api-qps`, `--threadiness`, …). `runProvisioner` handles SIGTERM (graceful
 * stop), probes and metrics on `HEALTH_PORT`, and exit codes.
 */
import {
  parseFlags,
  provisionerFlags,
  readProvisionerFlags,
  runProvisioner,
  usageText,
} from '@kube-provisioner/controller/cli';
import { DirectoryProvisioner } from './directory-provisioner.ts';

const flags = {
  'provisioner-name': {
    env: 'PROVISIONER_NAME',
    default: 'example.com/directory',
    description: 'provisioner name',
  },
  root: { env: 'ROOT', default: '/var/lib/directory-provisioner', description: 'directory of the volumes' },
  'health-port': { env: 'HEALTH_PORT', default: '8080', description: 'probes and metrics; 0 = off' },
  ...provisionerFlags,
};

await runProvisioner({
  name: 'directory-provisioner',
  version: '0.1.0',
  usage: usageText('directory-provisioner', flags),
  parse(argv, env) {
    const parsed = parseFlags(flags, argv, env);
    const options = { root: parsed.directory('root'), healthPort: parsed.integer('health-port', 0, 65535) };
    return {
      ...options,
      provisionerName: parsed.required('provisioner-name'),
      ...readProvisionerFlags(parsed),
    };
  },
  setup: (options) => ({
    controller: {
      provisionerName: options.provisionerName,
      provisioner: new DirectoryProvisioner(options.root),
      addFinalizer: true,
    },
    healthPort: options.healthPort,
  }),
});
