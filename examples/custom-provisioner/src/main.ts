/**
 * Entry point: `PROVISIONER_NAME` and `ROOT` configure the provisioner, plus the shared flags of
 * `provisionerFlags` (`--kubeconfig`, `--kube-api-qps`, `--threadiness`, …; see `--help`).
 * `runProvisioner` handles SIGTERM (graceful stop), health probes on `HEALTH_PORT` and exit codes.
 */
import { resolve } from 'node:path';
import {
  type Environment,
  type ProvisionerCliOptions,
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
    description: 'name in StorageClass.provisioner',
  },
  root: { env: 'ROOT', default: '/var/lib/directory-provisioner', description: 'directory of the volumes' },
  'health-port': { env: 'HEALTH_PORT', default: '8080', description: '/healthz, /readyz, /metrics; 0 = off' },
  ...provisionerFlags,
};

interface Options extends ProvisionerCliOptions {
  readonly provisionerName: string;
  readonly root: string;
  readonly healthPort: number;
}

function parse(argv: readonly string[], env: Environment): Options {
  const parsed = parseFlags(flags, argv, env);
  return {
    provisionerName: parsed.required('provisioner-name'),
    root: resolve(parsed.required('root')),
    healthPort: parsed.integer('health-port', 0, 65535),
    ...readProvisionerFlags(parsed),
  };
}

await runProvisioner<Options>({
  name: 'directory-provisioner',
  usage: usageText('directory-provisioner', flags),
  parse,
  setup: (options) => ({
    controller: {
      provisionerName: options.provisionerName,
      provisioner: new DirectoryProvisioner(options.root),
      addFinalizer: true,
    },
    healthPort: options.healthPort,
  }),
});
