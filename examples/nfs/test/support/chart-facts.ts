/**
 * Renders a chart with `helm template` and reduces each object to the facts an in-place upgrade
 * depends on: names, labels, selectors, the provisioner name, the ServiceAccount, bindings and the
 * StorageClass's immutable fields. Shared by the recorder of upstream's facts and the golden test.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type KubernetesObject, loadAllYaml } from '@kubernetes/client-node';
import { type ChartCase, chartNamespace } from './chart-matrix.ts';

const run = promisify(execFile);

/** What an object of the rendered chart is known by; the fields present depend on its kind. */
export interface ObjectFacts {
  readonly kind: string;
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
  /** `spec.selector.matchLabels` of a Deployment, PodDisruptionBudget or PersistentVolumeClaim. */
  readonly selector?: Readonly<Record<string, string>>;
  readonly podLabels?: Readonly<Record<string, string>>;
  readonly serviceAccountName?: string;
  readonly containerName?: string;
  /** The Deployment's `PROVISIONER_NAME`, or a StorageClass's `provisioner`. */
  readonly provisioner?: string;
  /** Name and source (`nfs`, `persistentVolumeClaim:<claim>`, `emptyDir`) of the mount root volume. */
  readonly rootVolume?: string;
  readonly parameters?: Readonly<Record<string, string>>;
  readonly reclaimPolicy?: string;
  readonly volumeBindingMode?: string;
  readonly allowVolumeExpansion?: boolean;
  readonly mountOptions?: readonly string[];
  readonly roleRef?: string;
  readonly subjects?: readonly string[];
  readonly rules?: readonly unknown[];
}

/** Options of {@link renderChart}. */
export interface RenderOptions {
  /** Replaces the chart's own values.yaml, as `helm upgrade --reuse-values` does with the old release's. */
  readonly chartValues?: Readonly<Record<string, unknown>>;
  /** Values given after the case's, like `--set` on the command line. */
  readonly overrides?: Readonly<Record<string, unknown>>;
  /** Release namespace; defaults to {@link chartNamespace}. */
  readonly namespace?: string;
}

/** `helm template` of `chartDir` for one case; resolves with the rendered objects. */
export async function renderChart(
  helm: string,
  chartDir: string,
  chartCase: ChartCase,
  options: RenderOptions = {},
): Promise<KubernetesObject[]> {
  const scratch = await mkdtemp(join(tmpdir(), 'chart-render-'));
  try {
    const files = [chartCase.values, options.overrides ?? {}].map((values, i) => {
      const file = join(scratch, `values-${i}.json`);
      return writeFile(file, JSON.stringify(values)).then(() => file);
    });
    const args = [
      'template',
      chartCase.release,
      chartDir,
      '--namespace',
      options.namespace ?? chartNamespace,
    ];
    for (const file of await Promise.all(files)) args.push('-f', file);
    for (const apiVersion of chartCase.apiVersions ?? []) args.push('--api-versions', apiVersion);
    let dir = chartDir;
    if (options.chartValues) {
      dir = join(scratch, 'chart');
      await run('cp', ['-r', chartDir, dir]);
      await writeFile(join(dir, 'values.yaml'), JSON.stringify(options.chartValues));
      args[2] = dir;
    }
    const { stdout } = await run(helm, args, { maxBuffer: 16 * 1024 * 1024 });
    return (loadAllYaml(stdout) as (KubernetesObject | null)[]).filter((o): o is KubernetesObject => !!o);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

type Json = Record<string, unknown>;

function at(object: unknown, ...path: string[]): unknown {
  return path.reduce<unknown>((node, key) => (node as Json | undefined)?.[key], object);
}

function stringMap(value: unknown): Record<string, string> | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const entries = Object.entries(value as Json).map(([k, v]) => [k, String(v)] as const);
  return entries.length ? Object.fromEntries(entries.sort(([a], [b]) => a.localeCompare(b))) : undefined;
}

function rootVolume(podSpec: unknown): string | undefined {
  const volume = (at(podSpec, 'volumes') as Json[] | undefined)?.[0];
  if (!volume) return undefined;
  const claim = at(volume, 'persistentVolumeClaim', 'claimName');
  const source = claim
    ? `persistentVolumeClaim:${String(claim)}`
    : Object.keys(volume).find((key) => key !== 'name');
  return `${String(volume.name)} (${source})`;
}

/** Kind-specific facts; fields left `undefined` are dropped by {@link objectFacts}. */
function kindFacts(object: KubernetesObject): Record<string, unknown> {
  const o = object as unknown as Json;
  switch (object.kind) {
    case 'Deployment': {
      const pod = at(o, 'spec', 'template', 'spec');
      const container = (at(pod, 'containers') as Json[] | undefined)?.[0];
      const env = (at(container, 'env') as { name: string; value?: string }[] | undefined) ?? [];
      return {
        selector: stringMap(at(o, 'spec', 'selector', 'matchLabels')),
        podLabels: stringMap(at(o, 'spec', 'template', 'metadata', 'labels')),
        serviceAccountName: at(pod, 'serviceAccountName') as string | undefined,
        containerName: at(container, 'name') as string | undefined,
        provisioner: env.find((e) => e.name === 'PROVISIONER_NAME')?.value,
        rootVolume: rootVolume(pod),
      };
    }
    case 'StorageClass':
      return {
        annotations: stringMap(at(o, 'metadata', 'annotations')),
        provisioner: o.provisioner as string,
        parameters: stringMap(o.parameters),
        reclaimPolicy: o.reclaimPolicy as string | undefined,
        volumeBindingMode: o.volumeBindingMode as string | undefined,
        allowVolumeExpansion: o.allowVolumeExpansion as boolean | undefined,
        mountOptions: o.mountOptions as string[] | undefined,
      };
    case 'ServiceAccount':
      return { annotations: stringMap(at(o, 'metadata', 'annotations')) };
    case 'PodDisruptionBudget':
    case 'PersistentVolumeClaim':
      return { selector: stringMap(at(o, 'spec', 'selector', 'matchLabels')) };
    case 'ClusterRole':
    case 'Role':
      return { rules: (o.rules as unknown[] | undefined) ?? [] };
    case 'ClusterRoleBinding':
    case 'RoleBinding':
      return {
        roleRef: `${String(at(o, 'roleRef', 'kind'))}/${String(at(o, 'roleRef', 'name'))}`,
        subjects: ((o.subjects as Json[] | undefined) ?? []).map(
          (s) => `${String(s.kind)} ${String(s.namespace)}/${String(s.name)}`,
        ),
      };
    default:
      return {};
  }
}

/** The facts of every rendered object, sorted by kind and name; absent fields are left out. */
export function objectFacts(objects: readonly KubernetesObject[]): ObjectFacts[] {
  return objects
    .map((object) => {
      const facts = {
        kind: object.kind ?? '',
        name: object.metadata?.name ?? '',
        labels: stringMap(object.metadata?.labels) ?? {},
        ...kindFacts(object),
      };
      return JSON.parse(JSON.stringify(facts)) as ObjectFacts;
    })
    .sort((a, b) => `${a.kind}/${a.name}`.localeCompare(`${b.kind}/${b.name}`));
}
