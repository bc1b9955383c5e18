/**
 * The error {@link ProvisionController}'s constructor throws for invalid options, recognised by a
 * registered symbol brand like the error kinds in `errors.ts`.
 */
import type { ProvisionControllerOptions } from './provision-controller-options.ts';
import { hasBrand, markBranded } from './util/brand.ts';

const configurationErrorBrand: unique symbol = Symbol.for('@kube-provisioner/controller/ConfigurationError');

/** An invalid {@link ProvisionControllerOptions} value. `problems` lists every one found. */
export class ConfigurationError extends Error {
  override readonly name = 'ConfigurationError';
  readonly problems: readonly string[];

  constructor(problems: readonly string[]) {
    super(`invalid ProvisionController options: ${problems.join('; ')}`);
    markBranded(this, configurationErrorBrand);
    this.problems = problems;
  }
}

/** Whether `err` is a {@link ConfigurationError} from any copy of this package. */
export function isConfigurationError(err: unknown): err is ConfigurationError {
  return hasBrand(err, configurationErrorBrand);
}
