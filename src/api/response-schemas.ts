import { AUTHORITY_CHECKS, EVENT_TYPES, OUTCOMES, RISK_LEVELS, TIERS } from '../model/index.js';

/** Response shapes of the API (service-interface.md section 2), for the OpenAPI document. */
const nullableString = { type: ['string', 'null'] } as const;
const isoTime = { type: 'string', format: 'date-time' } as const;

export const errorSchema = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message', 'request_id'],
      properties: {
        code: { type: 'string' },
        message: { type: 'string' },
        details: {},
        request_id: { type: 'string' },
      },
    },
  },
} as const;

export const decisionSchema = {
  type: 'object',
  required: ['decision_id', 'outcome', 'reason', 'risk_score', 'constraints', 'timestamp', 'audit_ref'],
  properties: {
    decision_id: { type: 'string' },
    outcome: { type: 'string', enum: [...OUTCOMES] },
    reason: { type: 'string' },
    risk_score: { type: 'number', minimum: 0, maximum: 1 },
    constraints: { type: 'object' },
    timestamp: isoTime,
    audit_ref: { type: 'string' },
    warnings: {
      type: 'array',
      items: { type: 'string' },
      description: 'What policies in warn mode would have decided; absent when none would have changed it.',
    },
  },
} as const;

/** The namespace of a namespaced actor's records (`team-a/bot`); null for cluster actors. */
const recordNamespace = {
  type: ['string', 'null'],
  description: "The actor's namespace, for a namespaced actor (team-a/bot); null for a cluster actor.",
} as const;

export const decisionRecordSchema = {
  ...decisionSchema,
  properties: {
    ...decisionSchema.properties,
    namespace: recordNamespace,
    audit: {
      type: 'object',
      properties: {
        status: { type: 'string', enum: ['not_required', 'pending', 'approved', 'denied', 'expired'] },
        expires_at: nullableString,
        parameters: { type: 'object', description: "The proposed action's parameters." },
        source: {
          type: 'string',
          enum: ['api', 'admission', 'mcp'],
          description:
            'Where the proposal came from: the HTTP API, the admission webhook, or the MCP tool proxy.',
        },
        kubernetes: {
          type: ['object', 'null'],
          description:
            'For admission decisions: the Kubernetes request (uid, username, operation, group, version, resource, subresource, namespace, name).',
        },
        mcp: {
          type: ['object', 'null'],
          description:
            'For tool-proxy decisions: the MCP call (server, tool, session_id, and definition_digest for a pinned tool).',
        },
        reviews: { type: 'array', items: { type: 'object' } },
        execution: { type: ['object', 'null'] },
        hash: { type: 'string' },
        seq: { type: 'integer' },
      },
    },
    confirmation_token: {
      type: 'string',
      description: 'Returned once, when a REQUIRE_CONFIRMATION decision is approved.',
    },
  },
} as const;

export const capabilitySchema = {
  type: 'object',
  required: ['id', 'name', 'risk_level', 'parameter_schema'],
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    description: { type: 'string' },
    risk_level: { type: 'string', enum: [...RISK_LEVELS] },
    parameter_schema: { type: 'object' },
    mcp: {
      type: 'object',
      required: ['server', 'tool', 'definition_digest'],
      properties: {
        server: { type: 'string' },
        tool: { type: 'string' },
        definition_digest: { type: 'string' },
      },
    },
    created_at: nullableString,
  },
} as const;

const statusSchema = {
  type: ['object', 'null'],
  properties: {
    ready: { type: 'boolean' },
    reason: { type: 'string' },
    message: { type: 'string' },
    outside_delegation: {
      type: 'string',
      description:
        "Of a namespaced object naming capabilities its namespace's Delegation does not cover: which (the object stays in use).",
    },
  },
} as const;

export const policySchema = {
  type: 'object',
  required: ['id', 'name', 'rules', 'enabled'],
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    namespace: { type: 'string', description: 'Of a NamespacedPolicy only.' },
    description: { type: 'string' },
    rules: { type: 'array', items: { type: 'object' } },
    enabled: { type: 'boolean' },
    enforcement_action: { type: 'string', enum: ['enforce', 'warn', 'audit'] },
    created_at: nullableString,
    generation: { type: ['integer', 'null'] },
    status: statusSchema,
  },
} as const;

export const grantSchema = {
  type: 'object',
  required: ['actor_id', 'capability', 'constraints'],
  properties: {
    actor_id: { type: 'string' },
    capability: { type: 'string' },
    constraints: { type: 'object' },
    source: { type: 'string' },
  },
} as const;

export const auditEntrySchema = {
  type: 'object',
  required: ['id', 'seq', 'event_type', 'timestamp', 'hash', 'previous_hash'],
  properties: {
    id: { type: 'string' },
    seq: { type: 'integer', minimum: 1 },
    event_type: { type: 'string', enum: [...EVENT_TYPES] },
    timestamp: isoTime,
    actor_id: nullableString,
    capability: nullableString,
    outcome: { type: ['string', 'null'], enum: [...OUTCOMES, null] },
    risk_score: { type: ['number', 'null'] },
    decision_id: nullableString,
    policies_evaluated: { type: 'array', items: { type: 'string' } },
    policy_matched: nullableString,
    data: { type: 'object' },
    namespace: {
      type: 'string',
      description:
        'The namespace the entry belongs to (of a namespaced object); absent for cluster-wide entries.',
    },
    hash: { type: 'string', pattern: '^sha256:[0-9a-f]{64}$' },
    previous_hash: { type: 'string', pattern: '^sha256:[0-9a-f]{64}$' },
  },
} as const;

export const trailSchema = {
  type: 'object',
  required: ['decision_id', 'request', 'evaluation', 'decision', 'integrity'],
  properties: {
    decision_id: { type: 'string' },
    namespace: recordNamespace,
    request: { type: 'object' },
    evaluation: {
      type: 'object',
      properties: {
        capability_check: { type: 'string' },
        authority_check: { type: 'string', enum: [...AUTHORITY_CHECKS] },
        tier: {
          type: ['string', 'null'],
          enum: [...TIERS, null],
          description:
            "Which tier's policies decided: namespace when a rule of the actor's namespace was stricter than the cluster tier's verdict, else cluster; null when the request was denied before any policy was asked (capability or authority check).",
        },
        risk_score: { type: 'number' },
        risk_threshold: { type: 'number' },
        policies_evaluated: { type: 'array', items: { type: 'string' } },
        policy_matched: nullableString,
      },
    },
    decision: { type: 'object' },
    review: { type: 'object' },
    execution: { type: ['object', 'null'] },
    integrity: {
      type: 'object',
      properties: {
        hash: { type: 'string' },
        previous_hash: { type: 'string' },
        chain_verified: { type: 'boolean' },
        inclusion_proof: {
          type: ['object', 'null'],
          description:
            'Inclusion proof against the latest signed checkpoint; null until one covers the entry',
          properties: {
            seq: { type: 'integer' },
            leaf_index: { type: 'integer' },
            tree_size: { type: 'integer' },
            hashes: { type: 'array', items: { type: 'string' } },
            checkpoint: { type: 'string' },
          },
        },
      },
    },
  },
} as const;

export function listSchema(plural: string, item: object) {
  return {
    type: 'object',
    required: [plural, 'total', 'cursor'],
    properties: {
      [plural]: { type: 'array', items: item },
      total: { type: 'integer' },
      cursor: nullableString,
    },
  };
}
