import { describe, expect, it } from 'vitest';
import { governedRules, neverGovernedBecause } from './governed-rules.js';

describe('governedRules: which verbs make a resource governed', () => {
  it.each(['create', 'update', 'patch', 'delete', 'deletecollection'])(
    'governs a resource whose only write verb is %s',
    (verb) => {
      const discovery = [
        { groupVersion: 'example.com/v1', resources: [{ name: 'widgets', verbs: ['get', verb] }] },
      ];
      expect(governedRules(discovery)).toStrictEqual([
        {
          apiGroups: ['example.com'],
          apiVersions: ['*'],
          operations: ['CREATE', 'UPDATE', 'DELETE', 'CONNECT'],
          resources: ['widgets'],
          scope: '*',
        },
      ]);
    },
  );

  it('leaves out read-only resources and resources that list no verbs', () => {
    const discovery = [
      {
        groupVersion: 'example.com/v1',
        resources: [{ name: 'readings', verbs: ['get', 'list', 'watch'] }, { name: 'mysteries' }],
      },
    ];
    expect(governedRules(discovery)).toStrictEqual([]);
  });
});

describe('neverGovernedBecause: exemptions hold only for the exact group and resource', () => {
  it.each([
    ['coordination.k8s.io', 'leasecandidates'],
    ['example.com', 'leases'],
    ['example.com', 'events'],
    ['example.com', 'nodes'],
    ['example.com', 'widgetreviews'],
    ['networking.k8s.io', 'ingresses'],
    ['metrics.k8s.io', 'nodes'],
  ])('governs %s %s', (group, resource) => {
    expect(neverGovernedBecause(group, resource)).toBeUndefined();
  });

  it.each([
    ['coordination.k8s.io', 'leases', 'leases'],
    ['events.k8s.io', 'events', 'events'],
    ['', 'events', 'events'],
    ['', 'nodes/proxy', 'kubelets'],
    ['authentication.k8s.io', 'tokenreviews', 'reviews'],
    ['example.com', 'widgets/status', 'status subresources'],
  ])('exempts %s %s (%s)', (group, resource, why) => {
    expect(neverGovernedBecause(group, resource)).toContain(why);
  });
});
