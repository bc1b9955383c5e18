/**
 * The StorageClass parameters an installation serving several exports reads itself, before the
 * export's provisioner sees the rest: which exports the class uses (`exports`, `exportSelector`) and
 * how it places new volumes on them (`placement`). With one export they are unknown parameters, as
 * upstream: only the several-exports provisioner takes them out.
 */
import { InfeasibleError } from '@kube-provisioner/controller';
import type { NfsExportConfig } from './export-list.ts';
import { exportsOfClass, exportsParameter } from './export-placement.ts';
import { parseLabelSelector, selectorMatches } from './label-selector.ts';
import {
  type PlacementPolicy,
  parsePlacementPolicy,
  placementParameter,
  placementPolicies,
} from './placement-policy.ts';

/** Class parameter selecting exports by their labels (a Kubernetes label selector). */
export const exportSelectorParameter = 'exportSelector';

/** What a class asks of an installation serving several exports. */
export interface ClassExports {
  /** The exports the class's new volumes may go to, in the installation's order; never empty. */
  readonly names: readonly string[];
  /** How a new volume is placed among them. */
  readonly placement: PlacementPolicy;
  /** The class's other parameters, for the export's provisioner. */
  readonly parameters: Readonly<Record<string, string>>;
}

/**
 * Reads `exports`, `exportSelector` and `placement` from `parameters`. With both `exports` and
 * `exportSelector` the class uses the exports it names that the selector matches (an intersection:
 * each parameter narrows, neither widens).
 *
 * @throws InfeasibleError naming every problem: an unknown export, a malformed selector, an unknown
 * policy, or a selection of no export (listing the exports and their labels).
 */
export function classExportsOf(
  parameters: Readonly<Record<string, string>> | undefined,
  exports: readonly NfsExportConfig[],
): ClassExports {
  const {
    [exportsParameter]: named,
    [exportSelectorParameter]: selectorText,
    [placementParameter]: policyText,
    ...rest
  } = parameters ?? {};
  const problems: string[] = [];
  let names: readonly string[] = exports.map((e) => e.name);
  try {
    names = exportsOfClass(named, names);
  } catch (err) {
    problems.push((err as Error).message);
  }
  if (selectorText !== undefined) {
    try {
      const selector = parseLabelSelector(selectorText);
      names = names.filter((name) =>
        selectorMatches(selector, exports.find((e) => e.name === name)?.labels ?? {}),
      );
    } catch (err) {
      problems.push(
        `invalid StorageClass parameter "${exportSelectorParameter}" ${JSON.stringify(selectorText)}: ${(err as Error).message}`,
      );
    }
  }
  const placement = policyText === undefined ? 'most-free' : parsePlacementPolicy(policyText);
  if (placement === undefined) {
    problems.push(
      `invalid StorageClass parameter "${placementParameter}" ${JSON.stringify(policyText)}: accepted values: ${placementPolicies.join(', ')}`,
    );
  }
  if (problems.length === 0 && names.length === 0) {
    const each = exports.map((e) => `${e.name} ${JSON.stringify(e.labels ?? {})}`);
    problems.push(
      `the StorageClass selects no export: "${exportSelectorParameter}" ${JSON.stringify(selectorText)} matches none of ${named === undefined ? 'the exports' : `the exports "${exportsParameter}" names`}; the exports and their labels: ${each.join(', ')}`,
    );
  }
  if (problems.length > 0 || placement === undefined) throw new InfeasibleError(problems.join('; '));
  return { names, placement, parameters: rest };
}
