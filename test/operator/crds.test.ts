import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { API_VERSION, isNamespacedKind, type Kind } from '../../src/model/index.js';
import { CRD_NAMES, supportsCelRules } from '../../scripts/crd-manifests.js';
import { describeWithControlPlane } from '../env/describe-with-control-plane.js';
import { installCrds } from '../env/install-crds.js';

const EXAMPLES = fileURLToPath(new URL('../../examples/manifests/', import.meta.url));
const collection = (kind: Kind): string => `/apis/${API_VERSION}/${CRD_NAMES[kind].plural}`;

interface Status {
  kind: 'Status';
  code: number;
  reason: string;
  message: string;
  details?: { causes?: { field?: string; message: string }[] };
}

interface Table {
  columnDefinitions: { name: string; type: string; priority: number }[];
  rows: { cells: unknown[]; object: { metadata: { name: string } } }[];
}

/**
 * Whether a server message names `field`. Kubernetes 1.20 drops list indices from schema
 * error paths (`spec.rules.outcome`); newer servers keep them (`spec.rules[0].outcome`).
 */
function namesField(text: string | undefined, field: string): boolean {
  return text !== undefined && (text.includes(field) || text.includes(field.replace(/\[\d+\]/g, '')));
}

function object(kind: Kind, name: string, spec: unknown): Record<string, unknown> {
  return { apiVersion: API_VERSION, kind, metadata: { name }, spec };
}

const capabilitySpec = { name: 'files.read', riskLevel: 'low' };

describeWithControlPlane('CRDs on a real kube-apiserver', (controlPlane) => {
  beforeAll(async () => {
    await installCrds(controlPlane());
  });

  it('install, become Established and are discoverable with short names and the arbiter category', async () => {
    const discovery = await controlPlane().request<{
      resources: {
        name: string;
        kind: string;
        namespaced: boolean;
        shortNames?: string[];
        categories?: string[];
      }[];
    }>('GET', `/apis/${API_VERSION}`);
    expect(discovery.status).toBe(200);
    const byKind = new Map(
      discovery.body.resources.filter((r) => !r.name.includes('/')).map((r) => [r.kind, r]),
    );
    for (const names of Object.values(CRD_NAMES)) {
      expect(byKind.get(names.kind)).toMatchObject({
        name: names.plural,
        namespaced: isNamespacedKind(names.kind),
        shortNames: names.shortNames,
        categories: ['arbiter'],
      });
    }
    expect(byKind.get('Policy')?.name).toBe('policies');
    expect(discovery.body.resources.map((r) => r.name)).toContain('policies/status');
  });

  it('accept every example manifest and apply schema defaults', async () => {
    const files = (await readdir(EXAMPLES)).filter((f) => f.endsWith('.yaml'));
    const docs = (
      await Promise.all(files.map(async (f) => parseAllDocuments(await readFile(join(EXAMPLES, f), 'utf8'))))
    )
      .flat()
      .map((doc) => doc.toJS() as { kind: Kind; metadata: { name: string } })
      .filter((doc) => doc !== null);
    expect(docs.length).toBeGreaterThanOrEqual(3);
    for (const doc of docs) {
      const res = await controlPlane().request('POST', collection(doc.kind), { body: doc });
      expect(res.status, `${doc.kind}/${doc.metadata.name}: ${res.text}`).toBe(201);
    }
    const policy = await controlPlane().request<{ spec: { rules: { priority: number }[] } }>(
      'POST',
      collection('Policy'),
      { body: object('Policy', 'defaults', { rules: [{ capability: 'files.read', outcome: 'DENY' }] }) },
    );
    expect(policy.status).toBe(201);
    expect(policy.body.spec).toMatchObject({ enabled: true, rules: [{ priority: 0 }] });
  });

  it('prune unknown fields instead of storing them, but keep parameterSchema whole', async () => {
    const parameterSchema = { type: 'object', properties: { path: { type: 'string', 'x-custom': 1 } } };
    const res = await controlPlane().request<{ spec: Record<string, unknown> }>(
      'POST',
      collection('Capability'),
      {
        body: object('Capability', 'pruned', { ...capabilitySpec, parameterSchema, surprise: true }),
      },
    );
    expect(res.status, res.text).toBe(201);
    expect(res.body.spec).not.toHaveProperty('surprise');
    expect(res.body.spec.parameterSchema).toEqual(parameterSchema);
  });

  const invalid: { title: string; kind: Kind; spec: unknown; field: string }[] = [
    {
      title: 'a risk level outside the enum',
      kind: 'Capability',
      spec: { ...capabilitySpec, riskLevel: 'extreme' },
      field: 'spec.riskLevel',
    },
    {
      title: 'a capability name off the pattern',
      kind: 'Capability',
      spec: { ...capabilitySpec, name: 'Files' },
      field: 'spec.name',
    },
    {
      title: 'a missing required field',
      kind: 'Capability',
      spec: { name: 'files.read' },
      field: 'spec.riskLevel',
    },
    { title: 'a missing spec', kind: 'Capability', spec: undefined, field: 'spec' },
    {
      title: 'an outcome outside the enum',
      kind: 'Policy',
      spec: { rules: [{ capability: 'files.read', outcome: 'MAYBE' }] },
      field: 'spec.rules[0].outcome',
    },
    {
      title: 'a rule without a capability',
      kind: 'Policy',
      spec: { rules: [{ outcome: 'DENY' }] },
      field: 'spec.rules[0].capability',
    },
    {
      title: 'a priority out of bounds',
      kind: 'Policy',
      spec: { rules: [{ capability: 'files.read', outcome: 'DENY', priority: 10_000_000 }] },
      field: 'spec.rules[0].priority',
    },
    {
      title: 'a time of day that is not HH:MM',
      kind: 'ActorGrant',
      spec: {
        actor: { id: 'agent-9' },
        grants: [
          {
            capability: 'files.read',
            constraints: { timeWindow: { start: '25:00', end: '06:00', timezone: 'UTC' } },
          },
        ],
      },
      field: 'spec.grants[0].constraints.timeWindow.start',
    },
    {
      title: 'a rate limit of zero requests',
      kind: 'ActorGrant',
      spec: {
        actor: { id: 'agent-9' },
        grants: [
          { capability: 'files.read', constraints: { rateLimit: { maxRequests: 0, windowSeconds: 60 } } },
        ],
      },
      field: 'spec.grants[0].constraints.rateLimit.maxRequests',
    },
    {
      title: 'an unknown actor type',
      kind: 'ActorGrant',
      spec: { actor: { id: 'a', type: 'robot' }, grants: [] },
      field: 'spec.actor.type',
    },
    {
      title: 'an actor without id',
      kind: 'ActorGrant',
      spec: { actor: {}, grants: [] },
      field: 'spec.actor.id',
    },
  ];

  it.each(invalid)('reject $title, naming $field', async ({ kind, spec, field }) => {
    const res = await controlPlane().request<Status>('POST', collection(kind), {
      body: object(kind, `invalid-${Math.random().toString(36).slice(2, 8)}`, spec),
    });
    expect(res.status, res.text).toBe(422);
    expect(res.body.reason).toBe('Invalid');
    expect(namesField(res.body.message, field), res.text).toBe(true);
    expect(
      res.body.details?.causes?.some((c) => namesField(c.field, field)),
      res.text,
    ).toBe(true);
  });

  it('reject an ActorGrant naming one capability twice (grants are a list map keyed by capability)', async () => {
    const res = await controlPlane().request<Status>('POST', collection('ActorGrant'), {
      body: object('ActorGrant', 'duplicates', {
        actor: { id: 'agent-7' },
        grants: [{ capability: 'files.read' }, { capability: 'files.write' }, { capability: 'files.read' }],
      }),
    });
    expect(res.status, res.text).toBe(422);
    expect(res.body.message).toContain('spec.grants[2]');
    expect(res.body.message).toMatch(/Duplicate value/);
  });

  it('keep spec.name immutable where the server runs CEL rules (1.25+), and only there', async () => {
    const cp = controlPlane();
    const created = await cp.request('POST', collection('Capability'), {
      body: object('Capability', 'renamed', { name: 'files.list', riskLevel: 'low' }),
    });
    expect(created.status, created.text).toBe(201);
    const renamed = await cp.request<Status>('PATCH', `${collection('Capability')}/renamed`, {
      body: { spec: { name: 'files.enumerate' } },
    });
    if (supportsCelRules(cp.version)) {
      expect(renamed.status, renamed.text).toBe(422);
      expect(renamed.body.message).toContain('spec.name is immutable');
    } else {
      // Older servers drop x-kubernetes-validations (installCrds strips them anyway).
      expect(renamed.status, renamed.text).toBe(200);
    }
    const riskChanged = await cp.request('PATCH', `${collection('Capability')}/renamed`, {
      body: { spec: { riskLevel: 'high' } },
    });
    expect(riskChanged.status, riskChanged.text).toBe(200);
  });

  it('have a status subresource: status is written there only, with its own schema', async () => {
    const cp = controlPlane();
    const created = await cp.request<{ metadata: { generation: number } }>('POST', collection('Policy'), {
      body: {
        ...object('Policy', 'status-demo', { rules: [{ capability: 'files.read', outcome: 'ALLOW' }] }),
        status: { ruleCount: 99 },
      },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body).not.toHaveProperty('status.ruleCount');

    const status = {
      observedGeneration: created.body.metadata.generation,
      ruleCount: 1,
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'Accepted',
          message: '1 rule',
          lastTransitionTime: '2026-01-01T00:00:00Z',
          observedGeneration: created.body.metadata.generation,
        },
      ],
    };
    const patched = await cp.request<{
      status: unknown;
      spec: { enabled: boolean };
      metadata: { generation: number };
    }>('PATCH', `${collection('Policy')}/status-demo/status`, { body: { status, spec: { enabled: false } } });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.status).toEqual(status);
    expect(patched.body.spec.enabled).toBe(true);
    expect(patched.body.metadata.generation).toBe(created.body.metadata.generation);

    const badStatus = await cp.request<Status>('PATCH', `${collection('Policy')}/status-demo/status`, {
      body: { status: { conditions: [{ ...status.conditions[0], status: 'Maybe' }] } },
    });
    expect(badStatus.status, badStatus.text).toBe(422);
    expect(namesField(badStatus.body.message, 'status.conditions[0].status'), badStatus.text).toBe(true);
  });

  it('serve printer columns for kubectl get (server-side Table)', async () => {
    const cp = controlPlane();
    const table = async (kind: Kind): Promise<Table> => {
      const res = await cp.request<Table>('GET', collection(kind), {
        headers: { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' },
      });
      expect(res.status, res.text).toBe(200);
      return res.body;
    };
    const columns = (t: Table, priority = 0): string[] =>
      t.columnDefinitions.filter((c) => c.priority === priority).map((c) => c.name);

    const capabilities = await table('Capability');
    expect(columns(capabilities)).toEqual(['Name', 'Capability', 'Risk', 'Ready', 'Age']);
    const databaseQuery = capabilities.rows.find((r) => r.object.metadata.name === 'database-query');
    expect(databaseQuery?.cells.slice(0, 3)).toEqual(['database-query', 'database.query', 'low']);

    const policies = await table('Policy');
    expect(columns(policies)).toEqual(['Name', 'Enabled', 'Enforcement', 'Rules', 'Ready', 'Age']);
    expect(columns(policies, 1)).toEqual(['Reason', 'Description']);
    const demo = policies.rows.find((r) => r.object.metadata.name === 'status-demo');
    // The API server fills in the schema's default: enforce.
    expect(demo?.cells.slice(0, 5)).toEqual(['status-demo', true, 'enforce', 1, 'True']);

    const grants = await table('ActorGrant');
    expect(columns(grants)).toEqual(['Name', 'Actor', 'Grants', 'Ready', 'Age']);
    expect(grants.rows.find((r) => r.object.metadata.name === 'agent-001')?.cells[1]).toBe('agent-001');
  });
});
