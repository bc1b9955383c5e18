import { spawn } from 'node:child_process';
import type { Socket } from 'node:net';

/** Releases a watchdog once its owner has cleaned up itself (stopped the control plane, the node…). */
export interface Reaper {
  release(): void;
}

// Blocks on its stdin, a pipe from the owner, which closes when the owner exits for any reason, even
// SIGKILL. It then stops every process group recorded in the pids directory: TERM, up to 10 s, KILL.
// `kill -15 -PGID` rather than `kill -s TERM -- -PGID`: dash's builtin rejects the latter.
const script = `
read -r _ || true
groups=
for f in "$1"/*.pid; do
  [ -f "$f" ] || continue
  g=$(cat "$f") && kill -15 -"$g" 2>/dev/null && groups="$groups $g"
done
i=0
while [ -n "$groups" ] && [ "$i" -lt 100 ]; do
  alive=
  for g in $groups; do kill -0 -"$g" 2>/dev/null && alive="$alive $g"; done
  groups=$alive
  i=$((i + 1))
  sleep 0.1
done
for g in $groups; do kill -9 -"$g" 2>/dev/null; done
exit 0
`;

/**
 * Starts `command` detached, in its own process group (so a Ctrl-C aimed at the runner does not kill it
 * before it has done its job), holding a pipe from this process on its stdin: the pipe closes when this
 * process dies for any reason, even SIGKILL. `release` writes `releaseInput` and closes the pipe.
 */
export function startWatchdog(command: string, args: readonly string[], releaseInput?: string): Reaper {
  const child = spawn(command, args, { detached: true, stdio: ['pipe', 'ignore', 'ignore'] });
  child.unref();
  const stdin = child.stdin;
  // The pipe must not keep the owner's event loop alive.
  (stdin as Socket | null)?.unref();
  stdin?.on('error', () => {});
  return {
    release(): void {
      stdin?.end(releaseInput);
    },
  };
}

/**
 * Starts a watchdog that stops the control plane recorded in `pidsDir` when this process dies, so a
 * crashed test runner leaves no processes behind.
 */
export function startReaper(pidsDir: string): Reaper {
  return startWatchdog('sh', ['-c', script, 'kube-testenv-reaper', pidsDir]);
}
