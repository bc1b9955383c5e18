import { describe, expect, it } from 'vitest';
import { parseRequestCounts, requestsBetween } from '../src/api-requests.ts';

const exposition = `# HELP apiserver_request_total [STABLE] Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.
# TYPE apiserver_request_total counter
apiserver_request_total{code="201",component="apiserver",dry_run="",group="",resource="persistentvolumes",scope="resource",subresource="",verb="POST",version="v1"} 1000
apiserver_request_total{code="409",component="apiserver",dry_run="",group="",resource="persistentvolumes",scope="resource",subresource="",verb="POST",version="v1"} 3
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="persistentvolumeclaims",scope="resource",subresource="status",verb="PUT",version="v1"} 7
apiserver_request_total{code="200",component="apiserver",dry_run="",group="coordination.k8s.io",resource="leases",scope="resource",subresource="",verb="PUT",version="v1"} 1.5e+06
apiserver_request_duration_seconds_count{component="apiserver",resource="persistentvolumes",verb="POST"} 99
`;

describe('parseRequestCounts', () => {
  it('sums apiserver_request_total over codes by verb, resource and subresource, and ignores other series', () => {
    expect(Object.fromEntries(parseRequestCounts(exposition))).toEqual({
      'POST persistentvolumes': 1003,
      'PUT persistentvolumeclaims/status': 7,
      'PUT leases': 1_500_000,
    });
  });
});

describe('requestsBetween', () => {
  it('keeps what was served between two readings, new kinds of request included', () => {
    const before = new Map([
      ['POST persistentvolumes', 10],
      ['PUT leases', 4],
    ]);
    const after = new Map([
      ['POST persistentvolumes', 25],
      ['PUT leases', 4],
      ['POST events', 2],
    ]);
    expect(Object.fromEntries(requestsBetween(before, after))).toEqual({
      'POST persistentvolumes': 15,
      'POST events': 2,
    });
  });
});
