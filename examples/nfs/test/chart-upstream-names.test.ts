/**
 * Golden test: for every (release name, values) case, our chart renders the same object names,
 * labels, selectors, provisioner name, ServiceAccount and bindings as the recorded upstream chart,
 * except for the reviewed differences of chart-allowed-differences.ts. Rendered twice: as a fresh
 * install (our values.yaml) and as `helm upgrade --reuse-values` of an upstream release does it
 * (upstream's values.yaml in place of ours, the image overridden).
 */
import { join } from 'node:path';
import { helmBinary } from '@kube-provisioner/testenv/internal';
import { beforeAll, describe, expect, it } from 'vitest';
import { allowedDifferences, type RenderMode } from './chart-allowed-differences.ts';
import { compareFacts, type FactDifference, isAllowed } from './support/chart-compare.ts';
import { objectFacts, renderChart } from './support/chart-facts.ts';
import { chartCases } from './support/chart-matrix.ts';
import { readUpstreamFixture } from './support/upstream-fixture.ts';

const chartDir = join(import.meta.dirname, '..', 'chart', 'nfs-subdir-provisioner');
const upstream = readUpstreamFixture();
const modes: readonly RenderMode[] = ['install', 'reuse-values'];
const image = { image: { repository: 'example.com/nfs-subdir-provisioner', tag: '0.1.0' } };
const differences: FactDifference[] = [];
let helm = '';

beforeAll(async () => {
  // Built from the Go module proxy on a cold cache (a few minutes); CI builds it in a step of its own.
  helm = await helmBinary();
  for (const mode of modes) {
    const options = mode === 'install' ? {} : { chartValues: upstream.defaultValues, overrides: image };
    const rendered = await Promise.all(chartCases.map((c) => renderChart(helm, chartDir, c, options)));
    for (const [i, chartCase] of chartCases.entries()) {
      const theirs = upstream.cases[chartCase.id] ?? [];
      differences.push(...compareFacts(chartCase.id, mode, theirs, objectFacts(rendered[i] ?? [])));
    }
  }
}, 900_000);

describe('our chart against the upstream chart', () => {
  it('has a recorded upstream rendering for every case', () => {
    expect(Object.keys(upstream.cases).sort()).toEqual(chartCases.map((c) => c.id).sort());
    expect(upstream.cases.default?.find((o) => o.kind === 'StorageClass')?.provisioner).toBe(
      'cluster.local/nfs-subdir-external-provisioner',
    );
  });

  it.each(modes)('renders the same names, labels, selectors and provisioner (%s)', (mode) => {
    const unexplained = differences.filter(
      (d) => d.mode === mode && !allowedDifferences.some((allowance) => isAllowed(allowance, d)),
    );
    expect(unexplained).toEqual([]);
  });

  it('lists no allowance that no longer matches a difference', () => {
    const unused = allowedDifferences.filter(
      (allowance) => !differences.some((d) => isAllowed(allowance, d)),
    );
    expect(unused).toEqual([]);
  });

  it('never differs on a field the API server keeps immutable', () => {
    const immutable = ['provisioner', 'parameters', 'reclaimPolicy', 'volumeBindingMode', 'selector'];
    expect(differences.filter((d) => immutable.includes(d.field))).toEqual([]);
  });
});
