#!/usr/bin/env node
/**
 * What ours' idle RSS is made of: starts ours (bundled with the image's flags, as the compare runs
 * it) `--starts` times, one after the other, against the cluster of `TESTENV_KUBECONFIG` (or a fresh
 * testenv), and prints for each start its RSS once its caches synced: the anonymous part (heaps and
 * stacks, ours to control) and the file-backed part by mapping. With `--drop-caches` (root) the
 * kernel's page cache is dropped before the first start, so the `node` executable is read in again.
 *
 *   npm exec -- node --conditions=@kube-provisioner/source packages/bench/src/idle-rss.ts \
 *     [--starts 4] [--drop-caches] [--library]
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { parseArgs } from 'node:util';
import { openBenchCluster } from './bench-cluster.ts';
import { libraryExampleCli, prepareOurs } from './ours-program.ts';
import { parseStatus, residentByMapping } from './proc-stats.ts';
import { startProvisioner } from './provisioner-process.ts';

const { values } = parseArgs({
  options: {
    starts: { type: 'string', default: '4' },
    'drop-caches': { type: 'boolean', default: false },
    library: { type: 'boolean', default: false },
  },
});
const starts = Number(values.starts);
if (!(Number.isInteger(starts) && starts >= 1)) throw new Error('--starts must be a positive integer');
const log = (message: string): void => {
  process.stderr.write(`${message}\n`);
};
const program = values.library
  ? await prepareOurs('image', log, libraryExampleCli(), 'custom-provisioner')
  : await prepareOurs('image', log);
const cluster = await openBenchCluster(log);
try {
  if (values['drop-caches']) await writeFile('/proc/sys/vm/drop_caches', '1\n');
  for (let start = 0; start < starts; start++) {
    const root = await mkdtemp(join(tmpdir(), 'idle-rss-'));
    const provisioner = await startProvisioner({
      implementation: { name: values.library ? 'library' : 'ours', program },
      kubeconfigPath: cluster.kubeconfigPath,
      root,
      provisionerName: `idle-rss.kube-provisioner.io/run-${process.pid}-${start}`,
      leaseNamespace: 'default',
    });
    try {
      const status = parseStatus(await readFile(`/proc/${provisioner.pid}/status`, 'utf8'));
      const mappings = residentByMapping(await readFile(`/proc/${provisioner.pid}/smaps`, 'utf8'));
      const files = [...mappings]
        .filter(([name]) => name.startsWith('/'))
        .sort(([, a], [, b]) => b - a)
        .slice(0, 3)
        .map(([name, size]) => `${basename(name)} ${(size / 1024).toFixed(2)}`);
      process.stdout.write(
        `start ${start + 1}: RSS ${status.rssMb.toFixed(2)} MiB = anonymous ${status.rssAnonMb.toFixed(2)} ` +
          `+ file-backed ${status.rssFileMb.toFixed(2)} (${files.join(', ')})\n`,
      );
    } finally {
      await provisioner.stop();
      await rm(root, { recursive: true, force: true });
    }
  }
} finally {
  await cluster.close();
  await program.close();
}
