/**
 * Toolkit for provisioner command-line programs: flags with environment fallbacks and help text, Go
 * value syntax, RBAC tables rendered to manifests, and {@link runProvisioner}, which owns signals,
 * the health server and exit codes.
 *
 * Stability: stable (see "Versioning" in the repository README).
 *
 * @packageDocumentation
 */

export type { PvSaveStrategy } from '../pv-save-options.ts';
export type { Environment, FlagSpec, FlagSpecs, ParsedArgv } from './flags.ts';
export { isUsageError, ParsedFlags, parseFlags, UsageError, usageText } from './flags.ts';
export { goBooleanSpellings, parseGoBoolean, parseGoDuration } from './go-syntax.ts';
export type { ProvisionerCliOptions, ProvisionerFlagName } from './provisioner-flags.ts';
export { provisionerFlags, readProvisionerFlags } from './provisioner-flags.ts';
export type { PolicyRule, RoleManifest } from './rbac.ts';
export {
  cloneAndExpandClusterRules,
  controllerClusterRules,
  leaderElectionRules,
  renderRole,
  renderRules,
  volumeAttributesClassRules,
  volumeExpansionRules,
} from './rbac.ts';
export type {
  CliApi,
  CliHost,
  ProgramControllerOptions,
  ProvisionerProgram,
  ProvisionerSetup,
} from './run-provisioner.ts';
export { runProvisioner } from './run-provisioner.ts';
export type { UsageCliOptions, UsageFlagName } from './usage-flags.ts';
export { readUsageFlags, usageFlags } from './usage-flags.ts';
