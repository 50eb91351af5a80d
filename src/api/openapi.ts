import {
  archiveBodySchema,
  auditQuerySchema,
  capabilityBodySchema,
  decisionQuerySchema,
  eventsQuerySchema,
  executionBodySchema,
  grantBodySchema,
  listQuerySchema,
  pendingQuerySchema,
  policyCreateSchema,
  policyUpdateSchema,
  proposalSchema,
  reviewBodySchema,
} from './request-schemas.js';
import {
  auditEntrySchema,
  capabilitySchema,
  decisionRecordSchema,
  decisionSchema,
  errorSchema,
  grantSchema,
  listSchema,
  policySchema,
  trailSchema,
} from './response-schemas.js';

type Schema = Record<string, unknown>;

interface Operation {
  summary: string;
  scope?: string;
  /** Any valid credential, no scope. */
  authenticated?: boolean;
  body?: Schema;
  query?: Schema;
  params?: string[];
  ok: { status: number; schema: Schema; type?: string };
}

/** Query parameters from the same schema ajv validates the query with. */
function queryParameters(schema: Schema | undefined) {
  const properties = (schema?.properties ?? {}) as Record<string, Schema>;
  return Object.entries(properties).map(([name, s]) => ({ name, in: 'query', required: false, schema: s }));
}

/** Which entries the log holds: from_seq on, continuing from the anchor of the last archive. */
const retainedSchema = {
  type: 'object',
  required: ['from_seq', 'anchor'],
  properties: {
    from_seq: { type: 'integer', minimum: 1 },
    anchor: {
      type: ['object', 'null'],
      properties: {
        seq: { type: 'integer' },
        hash: { type: 'string' },
        entry_id: { type: 'string' },
        checkpoint_time: { type: 'string', format: 'date-time' },
        archived_at: { type: 'string', format: 'date-time' },
        archive: { type: 'string' },
      },
    },
  },
} as const;

/** An audit list answer with the retained range (and more properties). */
function withRetained<S extends { properties: Record<string, unknown> }>(
  schema: S,
  more: Record<string, unknown> = {},
): S {
  return { ...schema, properties: { ...schema.properties, retained: retainedSchema, ...more } };
}

function operation(op: Operation) {
  const errors = Object.fromEntries(
    ['400', '401', '403', '404', '405', '409', '413', '415', '429', '500', '503'].map((code) => [
      code,
      {
        description: 'Error',
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
      },
    ]),
  );
  return {
    summary: op.summary,
    ...(op.scope
      ? { security: [{ bearer: [] }], description: `Requires scope \`${op.scope}\` (or admin).` }
      : {}),
    ...(op.authenticated ? { security: [{ bearer: [] }], description: 'Any valid credential.' } : {}),
    parameters: [
      ...(op.params ?? []).map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } })),
      ...queryParameters(op.query),
    ],
    ...(op.body
      ? { requestBody: { required: true, content: { 'application/json': { schema: op.body } } } }
      : {}),
    responses: {
      [String(op.ok.status)]: {
        description: 'Success',
        content: { [op.ok.type ?? 'application/json']: { schema: op.ok.schema } },
      },
      ...errors,
    },
  };
}

/** Where the policy and grant routes are: the cluster's, or a namespace's (issue #38). */
interface ConfigurationPaths {
  prefix: string;
  params: string[];
  policies: string;
  policy: string;
  /** Whose grants: the summary's subject. */
  actor: string;
}

const CLUSTER_PATHS: ConfigurationPaths = {
  prefix: '/api/v1',
  params: [],
  policies: 'policies',
  policy: 'policy',
  actor: 'an actor',
};

const NAMESPACE_PATHS: ConfigurationPaths = {
  prefix: '/api/v1/namespaces/{namespace}',
  params: ['namespace'],
  policies: "a namespace's NamespacedPolicies",
  policy: 'NamespacedPolicy',
  actor: 'a namespaced actor (NamespacedActorGrant; {id} is the local id, bot for team-a/bot)',
};

/** The same operations in both scopes: one set of handlers serves them (routes/configuration.ts). */
function configurationPaths(at: ConfigurationPaths) {
  const ok = (schema: Schema, status = 200) => ({ status, schema });
  return {
    [`${at.prefix}/policies`]: {
      get: operation({
        summary: `List ${at.policies}`,
        scope: 'governance:read',
        params: at.params,
        query: listQuerySchema,
        ok: ok(listSchema('policies', policySchema)),
      }),
      post: operation({
        summary: `Create a ${at.policy}`,
        scope: 'policies:manage',
        params: at.params,
        body: policyCreateSchema,
        ok: ok(policySchema, 201),
      }),
    },
    [`${at.prefix}/policies/{id}`]: {
      get: operation({
        summary: `One ${at.policy}`,
        scope: 'governance:read',
        params: [...at.params, 'id'],
        ok: ok(policySchema),
      }),
      put: operation({
        summary: `Replace a ${at.policy}`,
        scope: 'policies:manage',
        params: [...at.params, 'id'],
        body: policyUpdateSchema,
        ok: ok(policySchema),
      }),
      delete: operation({
        summary: `Delete a ${at.policy}`,
        scope: 'policies:manage',
        params: [...at.params, 'id'],
        ok: ok({
          type: 'object',
          required: ['id', 'deleted'],
          properties: { id: { type: 'string' }, deleted: { const: true } },
        }),
      }),
    },
    [`${at.prefix}/actors/{id}/grants`]: {
      get: operation({
        summary: `The grants of ${at.actor}`,
        scope: 'governance:read',
        params: [...at.params, 'id'],
        query: listQuerySchema,
        ok: ok(listSchema('grants', grantSchema)),
      }),
      post: operation({
        summary: `Grant a capability to ${at.actor}`,
        scope: 'grants:manage',
        params: [...at.params, 'id'],
        body: grantBodySchema,
        ok: ok(grantSchema, 201),
      }),
    },
    [`${at.prefix}/actors/{id}/grants/{capability}`]: {
      delete: operation({
        summary: `Revoke a capability of ${at.actor}`,
        scope: 'grants:manage',
        params: [...at.params, 'id', 'capability'],
        ok: ok({ type: 'object' }),
      }),
    },
  };
}

/** The OpenAPI 3.1 document of the whole API, from the schemas the server validates with. */
export function buildOpenApiDocument(version: string) {
  const ok = (schema: Schema, status = 200) => ({ status, schema });
  return {
    openapi: '3.1.0',
    info: {
      title: 'Arbiter governance API',
      version,
      description: 'Decisions, configuration and the hash-chained audit log.',
    },
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      schemas: { Error: errorSchema, Decision: decisionSchema, AuditEntry: auditEntrySchema },
    },
    paths: {
      '/healthz': { get: operation({ summary: 'Liveness', ok: ok({ type: 'object' }) }) },
      '/readyz': {
        get: operation({ summary: 'Readiness with the failing checks', ok: ok({ type: 'object' }) }),
      },
      '/metrics': {
        get: operation({
          summary: 'Prometheus metrics (text exposition format)',
          ok: { status: 200, schema: { type: 'string' }, type: 'text/plain' },
        }),
      },
      '/api/v1/openapi.json': {
        get: operation({ summary: 'This document', ok: ok({ type: 'object' }) }),
      },
      '/api/v1/auth/whoami': {
        get: operation({
          summary:
            'The caller behind the presented credential and the scopes it holds (for a Kubernetes user, with those RBAC grants it)',
          authenticated: true,
          ok: ok({
            type: 'object',
            required: ['principal', 'scopes', 'actors', 'namespaces', 'kubernetes'],
            properties: {
              principal: { type: 'string' },
              scopes: { type: 'array', items: { type: 'string' } },
              actors: { type: ['array', 'null'], items: { type: 'string' } },
              namespaces: { type: ['array', 'null'], items: { type: 'string' } },
              kubernetes: {
                type: ['object', 'null'],
                properties: {
                  username: { type: 'string' },
                  groups: { type: 'array', items: { type: 'string' } },
                },
              },
            },
          }),
        }),
      },
      '/api/v1/governance/propose': {
        post: operation({
          summary: 'Propose an action and get a decision',
          scope: 'governance:propose',
          body: proposalSchema,
          ok: ok(decisionSchema),
        }),
      },
      '/api/v1/governance/decisions': {
        get: operation({
          summary: 'List decisions, newest first',
          scope: 'governance:read',
          query: decisionQuerySchema,
          ok: ok(listSchema('decisions', decisionRecordSchema)),
        }),
      },
      '/api/v1/governance/pending': {
        get: operation({
          summary:
            "Decisions waiting for a reviewer, oldest first (of one namespace's actors with namespace); with Accept: text/event-stream, a live feed of decision.pending and decision.settled events (decision_id, outcome or status)",
          scope: 'governance:read',
          query: pendingQuerySchema,
          ok: ok(listSchema('decisions', decisionRecordSchema)),
        }),
      },
      '/api/v1/governance/decisions/{id}': {
        get: operation({
          summary: 'One decision with its audit information',
          scope: 'governance:read',
          params: ['id'],
          ok: ok(decisionRecordSchema),
        }),
      },
      '/api/v1/governance/decisions/{id}/approve': {
        post: operation({
          summary: 'Approve a pending decision',
          scope: 'governance:review',
          params: ['id'],
          body: reviewBodySchema,
          ok: ok(decisionRecordSchema),
        }),
      },
      '/api/v1/governance/decisions/{id}/deny': {
        post: operation({
          summary: 'Deny a pending decision',
          scope: 'governance:review',
          params: ['id'],
          body: reviewBodySchema,
          ok: ok(decisionRecordSchema),
        }),
      },
      '/api/v1/governance/decisions/{id}/execution': {
        post: operation({
          summary: 'Report the execution of an allowed action',
          scope: 'governance:propose',
          params: ['id'],
          body: executionBodySchema,
          ok: ok(decisionRecordSchema, 201),
        }),
      },
      '/api/v1/capabilities': {
        get: operation({
          summary: 'List capabilities',
          scope: 'governance:read',
          query: listQuerySchema,
          ok: ok(listSchema('capabilities', capabilitySchema)),
        }),
        post: operation({
          summary: 'Register a capability',
          scope: 'capabilities:manage',
          body: capabilityBodySchema,
          ok: ok(capabilitySchema, 201),
        }),
      },
      '/api/v1/capabilities/{name}': {
        delete: operation({
          summary:
            'Delete a capability (every object claiming the name); 409 while a grant or policy rule names it',
          scope: 'capabilities:manage',
          params: ['name'],
          ok: ok({
            type: 'object',
            required: ['name', 'deleted', 'objects'],
            properties: {
              name: { type: 'string' },
              deleted: { const: true },
              objects: { type: 'array', items: { type: 'string' } },
            },
          }),
        }),
      },
      ...configurationPaths(CLUSTER_PATHS),
      ...configurationPaths(NAMESPACE_PATHS),
      '/api/v1/audit/events': {
        get: operation({
          summary: 'Recent events, newest first; SSE live feed with Accept: text/event-stream',
          scope: 'audit:read',
          query: eventsQuerySchema,
          ok: ok(withRetained(listSchema('events', auditEntrySchema))),
        }),
      },
      '/api/v1/audit/log': {
        get: operation({
          summary:
            'Query the audit log: the retained entries (see retained); partial when older matches may be in archives',
          scope: 'audit:read',
          query: auditQuerySchema,
          ok: ok(withRetained(listSchema('entries', auditEntrySchema), { partial: { type: 'boolean' } })),
        }),
      },
      '/api/v1/audit/archive': {
        post: operation({
          summary:
            'Archive the entries up to the newest checkpoint before a time (and before the oldest decision waiting for review) to a file in the archive folder, verify it, carry the audited configuration past the cut, then remove them from the log',
          scope: 'admin',
          body: archiveBodySchema,
          ok: ok({
            type: 'object',
            required: ['archive', 'retained', 'message'],
            properties: {
              archive: {
                type: ['object', 'null'],
                properties: {
                  file: { type: 'string' },
                  from_seq: { type: 'integer' },
                  to_seq: { type: 'integer' },
                  entries: { type: 'integer' },
                  bytes: { type: 'integer' },
                  sha256: { type: 'string' },
                },
              },
              retained: retainedSchema,
              message: { type: 'string' },
              kept: {
                type: 'object',
                description:
                  'The entry still in use (the oldest decision waiting for review) that stopped the cut before the newest due checkpoint',
                properties: { seq: { type: 'integer' }, reason: { type: 'string' } },
              },
            },
          }),
        }),
      },
      '/api/v1/audit/log/{decision_id}': {
        get: operation({
          summary: 'The audit trail of one decision',
          scope: 'audit:read',
          params: ['decision_id'],
          ok: ok(trailSchema),
        }),
      },
      '/api/v1/audit/export': {
        get: operation({
          summary: 'Bulk export as JSON Lines, oldest first',
          scope: 'audit:read',
          query: auditQuerySchema,
          ok: { status: 200, schema: auditEntrySchema, type: 'application/x-ndjson' },
        }),
      },
      '/api/v1/audit/checkpoint': {
        get: operation({
          summary: 'The latest signed checkpoint of the audit tree (C2SP signed note)',
          scope: 'audit:read',
          ok: { status: 200, schema: { type: 'string' }, type: 'text/plain' },
        }),
      },
      '/api/v1/audit/checkpoints': {
        get: operation({
          summary:
            'Retained checkpoints of the audit chain, newest first; signed ones with their cosigned note',
          scope: 'audit:read',
          ok: ok({
            type: 'object',
            required: ['checkpoints'],
            properties: {
              checkpoints: {
                type: 'array',
                items: {
                  type: 'object',
                  required: ['seq', 'hash', 'entry_id', 'time', 'note'],
                  properties: {
                    seq: { type: 'integer' },
                    hash: { type: 'string' },
                    entry_id: { type: 'string' },
                    time: { type: 'string', format: 'date-time' },
                    note: { type: ['string', 'null'] },
                  },
                },
              },
            },
          }),
        }),
      },
      '/api/v1/audit/proof/{seq}': {
        get: operation({
          summary:
            'Inclusion proof of an entry against a signed checkpoint; ?format=tlog-proof for C2SP text',
          scope: 'audit:read',
          params: ['seq'],
          query: {
            type: 'object',
            properties: {
              tree_size: { type: 'string', pattern: '^[1-9][0-9]*$' },
              format: { enum: ['json', 'tlog-proof'] },
            },
          },
          ok: ok({
            type: 'object',
            required: ['seq', 'leaf_index', 'tree_size', 'hashes', 'checkpoint'],
            properties: {
              seq: { type: 'integer' },
              leaf_index: { type: 'integer' },
              tree_size: { type: 'integer' },
              hashes: { type: 'array', items: { type: 'string', contentEncoding: 'base64' } },
              checkpoint: { type: 'string' },
            },
          }),
        }),
      },
      '/api/v1/audit/consistency': {
        get: operation({
          summary: 'Consistency proof between two tree sizes, up to the latest signed checkpoint',
          scope: 'audit:read',
          query: {
            type: 'object',
            required: ['from', 'to'],
            properties: {
              from: { type: 'string', pattern: '^(0|[1-9][0-9]*)$' },
              to: { type: 'string', pattern: '^(0|[1-9][0-9]*)$' },
            },
          },
          ok: ok({
            type: 'object',
            required: ['from', 'to', 'hashes'],
            properties: {
              from: { type: 'integer' },
              to: { type: 'integer' },
              hashes: { type: 'array', items: { type: 'string', contentEncoding: 'base64' } },
            },
          }),
        }),
      },
      '/api/v1/audit/verify': {
        get: operation({
          summary: 'Verify the retained chain from its anchor against the checkpoints',
          scope: 'audit:read',
          ok: ok({ type: 'object', properties: { ok: { type: 'boolean' }, retained: retainedSchema } }),
        }),
      },
    },
  };
}
