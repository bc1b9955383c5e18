/**
 * klog's command-line flags that upstream manifests pass to Go provisioners (`-v` is a real flag of
 * ours, see `provisionerFlags`). Accepted so an image swap does not crash-loop on exit code 2, each
 * with one warning that says it has no effect here.
 */

/** A klog flag we accept and ignore. */
export interface KlogFlag {
  /** Takes no value (`-logtostderr`, `-logtostderr=false`); others take one (`-log_dir=/x`, `-log_dir /x`). */
  readonly boolean: boolean;
  /** Why it has no effect, for the warning. */
  readonly reason: string;
}

const stderrJson = 'logs are always JSON lines on stderr';

/** klog's flags by name, as `klog.InitFlags` registers them (underscores included). */
export const klogFlags: Readonly<Record<string, KlogFlag>> = {
  logtostderr: { boolean: true, reason: stderrJson },
  alsologtostderr: { boolean: true, reason: stderrJson },
  stderrthreshold: { boolean: false, reason: `${stderrJson}; use -v for verbosity` },
  log_dir: { boolean: false, reason: `${stderrJson}, never to files` },
  log_file: { boolean: false, reason: `${stderrJson}, never to files` },
  log_file_max_size: { boolean: false, reason: `${stderrJson}, never to files` },
  add_dir_header: { boolean: true, reason: 'JSON lines carry no source location' },
  skip_headers: { boolean: true, reason: 'JSON lines have no klog header' },
  skip_log_headers: { boolean: true, reason: 'no log files are written' },
  one_output: { boolean: true, reason: 'no log files are written' },
  legacy_stderr_threshold_behavior: { boolean: true, reason: stderrJson },
  log_backtrace_at: { boolean: false, reason: 'stack traces come with logged errors' },
  vmodule: { boolean: false, reason: 'verbosity is global; use -v' },
};

/** The warning for an ignored klog flag. */
export function klogWarning(name: string, flag: KlogFlag): string {
  return `ignoring klog flag -${name}: ${flag.reason}`;
}
