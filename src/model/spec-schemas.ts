import {
  ACTOR_TYPES,
  CAPABILITY_NAME_MAX_LENGTH,
  CAPABILITY_NAME_PATTERN,
  ENFORCEMENT_ACTIONS,
  MCP_SERVER_NAME_PATTERN,
  OUTCOMES,
  RISK_LEVELS,
  SUBJECT_KINDS,
} from './vocabulary.js';

/**
 * JSON Schemas (OpenAPI v3 structural subset) of the cluster kinds' specs (SPEC_SCHEMAS has
 * every kind's). They are the one
 * source of truth: manifests are validated with them (ajv), and the CRDs in crds/ embed
 * them (a test checks that the two agree).
 */

const capabilityName = {
  type: 'string',
  pattern: CAPABILITY_NAME_PATTERN,
  maxLength: CAPABILITY_NAME_MAX_LENGTH,
} as const;

const timeOfDay = { type: 'string', pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$' } as const;

export const capabilitySpecSchema = {
  type: 'object',
  required: ['name', 'riskLevel'],
  additionalProperties: false,
  properties: {
    name: { ...capabilityName, description: 'Dotted capability name, <area>.<operation>.' },
    description: { type: 'string', maxLength: 1024 },
    riskLevel: { type: 'string', enum: [...RISK_LEVELS] },
    parameterSchema: {
      type: 'object',
      description: 'JSON Schema of the action parameters.',
      'x-kubernetes-preserve-unknown-fields': true,
    },
    mcp: {
      type: 'object',
      required: ['server', 'tool', 'definitionDigest'],
      additionalProperties: false,
      description:
        'The MCP tool this capability stands for, pinned to its definition: a call is denied while the tool the upstream lists has another digest.',
      properties: {
        server: {
          type: 'string',
          pattern: MCP_SERVER_NAME_PATTERN,
          maxLength: CAPABILITY_NAME_MAX_LENGTH,
          description: 'The upstream, as in --mcp-server NAME=URL.',
        },
        tool: {
          type: 'string',
          minLength: 1,
          maxLength: CAPABILITY_NAME_MAX_LENGTH,
          description: "The tool's name.",
        },
        definitionDigest: {
          type: 'string',
          pattern: '^sha256:[0-9a-f]{64}$',
          description:
            "sha256: and the hex SHA-256 of the RFC 8785 JSON of the tool's name, title, description, inputSchema, outputSchema and annotations.",
        },
      },
    },
  },
} as const;

/** The longest a decision may wait for review: a week. */
export const MAX_REVIEW_TTL_SECONDS = 604_800;

export const policyRuleSchema = {
  type: 'object',
  required: ['capability', 'outcome'],
  additionalProperties: false,
  properties: {
    capability: capabilityName,
    condition: {
      type: 'string',
      maxLength: 4096,
      description:
        "CEL expression over parameters, actor, context and time that yields a bool, type-checked against the capability's parameterSchema; absent means always.",
    },
    outcome: { type: 'string', enum: [...OUTCOMES] },
    priority: { type: 'integer', minimum: -1000000, maximum: 1000000, default: 0 },
    reviewTtlSeconds: {
      type: 'integer',
      minimum: 1,
      maximum: MAX_REVIEW_TTL_SECONDS,
      description:
        "How long a decision this rule escalates (ESCALATE, REQUIRE_CONFIRMATION) waits for a reviewer; default: the server's --pending-ttl.",
    },
  },
} as const;

export const policySpecSchema = {
  type: 'object',
  required: ['rules'],
  additionalProperties: false,
  properties: {
    description: { type: 'string', maxLength: 1024 },
    enabled: { type: 'boolean', default: true },
    enforcementAction: {
      type: 'string',
      enum: [...ENFORCEMENT_ACTIONS],
      default: 'enforce',
      description:
        'enforce: the rules decide; warn: callers are told what they would decide; audit: only the trail records it.',
    },
    rules: { type: 'array', maxItems: 256, items: policyRuleSchema },
  },
} as const;

export const grantConstraintsSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    timeWindow: {
      type: 'object',
      required: ['start', 'end', 'timezone'],
      additionalProperties: false,
      properties: {
        start: timeOfDay,
        end: timeOfDay,
        timezone: { type: 'string', minLength: 1, maxLength: 64, description: 'IANA time zone name.' },
      },
    },
    rateLimit: {
      type: 'object',
      required: ['maxRequests', 'windowSeconds'],
      additionalProperties: false,
      properties: {
        maxRequests: { type: 'integer', minimum: 1, maximum: 1000000000 },
        windowSeconds: { type: 'integer', minimum: 1, maximum: 31622400 },
      },
    },
  },
} as const;

/**
 * A Kubernetes identity bound to the actor (RBAC's subject shape): its API requests are
 * governed as the actor's proposals, and its ServiceAccount token authenticates as it.
 */
export const actorSubjectSchema = {
  type: 'object',
  required: ['kind', 'name'],
  additionalProperties: false,
  properties: {
    kind: { type: 'string', enum: [...SUBJECT_KINDS] },
    name: { type: 'string', minLength: 1, maxLength: 253 },
    namespace: {
      type: 'string',
      minLength: 1,
      maxLength: 63,
      description: "The ServiceAccount's namespace (ServiceAccount only).",
    },
  },
} as const;

export const actorGrantSpecSchema = {
  type: 'object',
  required: ['actor', 'grants'],
  additionalProperties: false,
  properties: {
    actor: {
      type: 'object',
      required: ['id'],
      additionalProperties: false,
      properties: {
        id: { type: 'string', minLength: 1, maxLength: 256 },
        type: { type: 'string', enum: [...ACTOR_TYPES] },
        subjects: { type: 'array', maxItems: 64, items: actorSubjectSchema },
      },
    },
    grants: {
      type: 'array',
      maxItems: 1024,
      items: {
        type: 'object',
        required: ['capability'],
        additionalProperties: false,
        properties: { capability: capabilityName, constraints: grantConstraintsSchema },
      },
    },
  },
} as const;
