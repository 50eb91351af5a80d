import {
  ACTOR_TYPES,
  CAPABILITY_NAME_MAX_LENGTH,
  CAPABILITY_NAME_PATTERN,
  EVENT_TYPES,
  NAMESPACE_NAME_MAX_LENGTH,
  NAMESPACE_NAME_PATTERN,
  OUTCOMES,
  actorGrantSpecSchema,
  capabilitySpecSchema,
  policySpecSchema,
} from '../model/index.js';
import { DEFAULT_LIMIT, LIMIT_RULE } from './paging.js';
import { wireSchema } from './wire-format.js';

/**
 * Request bodies of the API, in snake_case. Configuration bodies are derived from the
 * spec schemas of src/model (the CRDs' source), so the API and the CRDs accept the same.
 */
export const OBJECT_NAME_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';

export const proposalSchema = {
  type: 'object',
  required: ['actor', 'action'],
  additionalProperties: false,
  properties: {
    actor: {
      type: 'object',
      required: ['id', 'type'],
      additionalProperties: false,
      properties: {
        id: { type: 'string', minLength: 1, maxLength: 256 },
        type: { type: 'string', enum: [...ACTOR_TYPES] },
      },
    },
    action: {
      type: 'object',
      required: ['capability', 'parameters'],
      additionalProperties: false,
      properties: {
        capability: {
          type: 'string',
          pattern: CAPABILITY_NAME_PATTERN,
          maxLength: CAPABILITY_NAME_MAX_LENGTH,
        },
        parameters: { type: 'object' },
      },
    },
    context: {
      type: 'object',
      additionalProperties: false,
      properties: {
        session_id: { type: 'string', maxLength: 256 },
        metadata: { type: 'object' },
        confirmation_token: { type: 'string', maxLength: 256 },
      },
    },
  },
} as const;

const capabilityWire = wireSchema(capabilitySpecSchema) as Record<string, unknown>;
export const capabilityBodySchema = capabilityWire;

const policyWire = wireSchema(policySpecSchema) as { properties: Record<string, unknown> };
export const policyCreateSchema = {
  ...policyWire,
  required: ['name', 'rules'],
  properties: {
    name: { type: 'string', pattern: OBJECT_NAME_PATTERN, maxLength: 253 },
    ...policyWire.properties,
  },
};
/** PUT replaces the policy; the name comes from the path (a body name must agree). */
export const policyUpdateSchema = { ...policyCreateSchema, required: ['rules'] };

const grantWire = wireSchema(actorGrantSpecSchema) as {
  properties: { grants: { items: { properties: Record<string, unknown>; required: string[] } } };
};
export const grantBodySchema = {
  type: 'object',
  required: grantWire.properties.grants.items.required,
  additionalProperties: false,
  properties: {
    ...grantWire.properties.grants.items.properties,
    actor_type: { type: 'string', enum: [...ACTOR_TYPES] },
  },
};

export const reviewBodySchema = {
  type: 'object',
  additionalProperties: false,
  properties: { comment: { type: 'string', maxLength: 2048 } },
} as const;

export const executionBodySchema = {
  type: 'object',
  required: ['status'],
  additionalProperties: false,
  properties: {
    status: { type: 'string', enum: ['completed', 'failed'] },
    result_summary: { type: 'string', maxLength: 4096 },
    duration_ms: { type: 'integer', minimum: 0, maximum: 86_400_000 },
  },
} as const;

const isoTime = { type: 'string', format: 'date-time' } as const;
// Checked by parseLimit alone, which says what it takes.
const limitParam = {
  type: 'string',
  description: `${LIMIT_RULE} (default ${DEFAULT_LIMIT})`,
} as const;

/** The records of a namespace's actors (`team-a/bot`): a Kubernetes namespace name. */
const namespaceParam = {
  type: 'string',
  pattern: NAMESPACE_NAME_PATTERN,
  maxLength: NAMESPACE_NAME_MAX_LENGTH,
} as const;

export const decisionQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    actor_id: { type: 'string', maxLength: 256 },
    capability: { type: 'string', maxLength: CAPABILITY_NAME_MAX_LENGTH },
    outcome: { type: 'string', enum: [...OUTCOMES] },
    namespace: namespaceParam,
    since: isoTime,
    until: isoTime,
    limit: limitParam,
    cursor: { type: 'string', maxLength: 512 },
  },
} as const;

export const auditQuerySchema = {
  ...decisionQuerySchema,
  properties: {
    ...decisionQuerySchema.properties,
    decision_id: { type: 'string', maxLength: 256 },
    event_type: { type: 'string', enum: [...EVENT_TYPES] },
    order: { type: 'string', enum: ['asc', 'desc'] },
  },
} as const;

export const eventsQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    event_type: { type: 'string', enum: [...EVENT_TYPES] },
    limit: limitParam,
    cursor: { type: 'string', maxLength: 512 },
  },
} as const;

export const listQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: { limit: limitParam, cursor: { type: 'string', maxLength: 512 } },
} as const;

/** GET /api/v1/governance/pending: a page, of one namespace's actors' decisions when set. */
export const pendingQuerySchema = {
  ...listQuerySchema,
  properties: { ...listQuerySchema.properties, namespace: namespaceParam },
} as const;

/** POST /api/v1/audit/archive. */
export const archiveBodySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['before'],
  properties: { before: { type: 'string', format: 'date-time', maxLength: 64 } },
} as const;
