/**
 * The recorded facts of the upstream nfs-subdir-external-provisioner chart (see
 * scripts/record-upstream-chart.ts): observed renderings, not upstream's template text.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ObjectFacts } from './chart-facts.ts';

/** Shape of test/fixtures/upstream-chart-facts.json. */
export interface UpstreamChartFixture {
  /** Repository and commit the facts were recorded from. */
  readonly source: string;
  readonly chart: { readonly name: string; readonly version: string; readonly appVersion: string };
  /** `helm show values` of the upstream chart, parsed. */
  readonly defaultValues: Readonly<Record<string, unknown>>;
  /** Facts of the rendered objects per case id of chart-matrix.ts. */
  readonly cases: Record<string, readonly ObjectFacts[]>;
}

export const upstreamFixturePath: string = join(
  import.meta.dirname,
  '..',
  'fixtures',
  'upstream-chart-facts.json',
);

/** Reads the committed fixture. */
export function readUpstreamFixture(): UpstreamChartFixture {
  return JSON.parse(readFileSync(upstreamFixturePath, 'utf8')) as UpstreamChartFixture;
}
