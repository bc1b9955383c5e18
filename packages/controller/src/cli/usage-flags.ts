/**
 * The flags of usage reporting (`@kube-provisioner/controller/usage`), for a CLI that measures its
 * volumes: how often, and within what I/O budget. A program merges {@link usageFlags} into its own
 * table, with a default rate its storage tolerates, and reads them with {@link readUsageFlags}.
 */
import type { FlagSpecs, ParsedFlags } from './flags.ts';

/** Names of {@link usageFlags}. */
export type UsageFlagName = 'usage-interval' | 'usage-scan-rate';

/** Usage-reporting settings from the command line. */
export interface UsageCliOptions {
  /** How often the usage of the volumes is measured, in milliseconds. */
  readonly usageIntervalMs: number;
  /** System calls per second the usage scans may make together; 0 turns usage reporting off. */
  readonly usageScanRate: number;
}

/** The usage flags, scans defaulting to `defaultScanRate` calls a second. */
export function usageFlags(defaultScanRate: number): FlagSpecs<UsageFlagName> {
  return {
    'usage-interval': {
      env: 'USAGE_INTERVAL',
      default: '5m',
      description: 'how often the usage of each volume is measured (Go duration)',
    },
    'usage-scan-rate': {
      env: 'USAGE_SCAN_RATE',
      default: String(defaultScanRate),
      description: 'file-system calls per second the usage scans may make; 0 = no usage metrics',
    },
  };
}

/** Reads the flags of {@link usageFlags}. */
export function readUsageFlags(flags: ParsedFlags<UsageFlagName>): UsageCliOptions {
  return {
    usageIntervalMs: flags.goDuration('usage-interval'),
    usageScanRate: flags.integer('usage-scan-rate', 0, 1_000_000),
  };
}
