/**
 * The hostile tenant as a process of its own, racing the copy for real: `node hostile-tenant-process.ts
 * <dir> <outside>` changes `dir` (`tenantStep`) until its standard input ends, says `ready` on its
 * standard output after its first round and `rounds <n>` when it stops.
 */
import { tenantStep } from './hostile-tenant.ts';

const [dir = '', outside = ''] = process.argv.slice(2);
let round = 0;
let stopping = false;
process.stdin.on('end', () => {
  stopping = true;
});
process.stdin.resume();

function rounds(): void {
  for (let step = 0; step < 8; step++) tenantStep(dir, outside, round++);
  if (round === 8) process.stdout.write('ready\n');
  if (stopping) {
    process.stdout.write(`rounds ${round}\n`);
    process.exit(0);
  }
  // Between two rounds the tenant lets its input be read, so that it hears when to stop.
  setImmediate(rounds);
}
rounds();
