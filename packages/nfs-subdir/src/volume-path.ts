/**
 * Where a claim's directory goes under the export: the class's `pathPattern` rendered for the claim,
 * else upstream's `<namespace>-<claim>-<pv>`. A render that cannot name a directory inside the export
 * is infeasible.
 */
import { InfeasibleError } from '@kube-provisioner/controller';
import {
  parseRelativeVolumePath,
  type RelativeVolumePath,
  renderPathPattern,
} from '@kube-provisioner/safe-fs';
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import type { ClassParameters } from './class-parameters.ts';

// biome-ignore lint/suspicious/noTemplateCurlyInString: a pathPattern placeholder, not a JS template
const namespacePlaceholder = '${.PVC.namespace}';

/**
 * The directory of claim `pvc` for PV `pvName`, relative to the export.
 *
 * @throws InfeasibleError when the pattern's render is not a usable path (`..`, absolute, too long…).
 */
export function volumePathFor(
  parameters: ClassParameters,
  pvc: Readonly<V1PersistentVolumeClaim>,
  pvName: string,
): RelativeVolumePath {
  const namespace = pvc.metadata?.namespace ?? '';
  const name = pvc.metadata?.name ?? '';
  const defaultName = `${namespace}-${name}-${pvName}`;
  const what = parameters.pathPattern === undefined ? 'the directory name' : 'parameter "pathPattern"';
  try {
    if (parameters.pathPattern === undefined) return parseRelativeVolumePath(defaultName);
    const claim = { namespace, name, labels: pvc.metadata?.labels, annotations: pvc.metadata?.annotations };
    const rendered = cleanRender(renderPathPattern(parameters.pathPattern, { claim, pvName }));
    return parseRelativeVolumePath(rendered === '' ? defaultName : rendered);
  } catch (err) {
    throw new InfeasibleError(`${what} does not give a usable directory: ${(err as Error).message}`, {
      cause: err,
    });
  }
}

/**
 * Whether every render of `pattern` starts with the claim's namespace. safe-fs then counts a path as
 * the namespace's when its first segment is the namespace; a flat `<ns>-…` name only with the class's
 * `adoptAmbiguousNamespacePrefix` (namespaces `a` + `b-c` and `a-b` + `c` render the same name).
 */
export function rendersUnderNamespace(pattern: string | undefined): boolean {
  return pattern?.startsWith(namespacePlaceholder) === true;
}

/**
 * A render cleaned as upstream's `filepath.Join` cleans it, minus what could leave the export or
 * hide a mistake: empty and `.` segments go (`data/`, `./x`, `a//b`, a missing annotation at the
 * end); `..` stays, and so does a leading `/` (a value meant as an absolute path), for validation to
 * refuse. An empty result, or one of only `/` and `.` (leading `/` included), means the default
 * name, as upstream master.
 */
function cleanRender(rendered: string): string {
  const segments = rendered.split('/');
  if (segments.every((segment) => segment === '' || segment === '.')) return '';
  if (rendered.startsWith('/')) return rendered;
  return segments.filter((segment) => segment !== '' && segment !== '.').join('/');
}
