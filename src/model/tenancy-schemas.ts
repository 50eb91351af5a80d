import {
  LOCAL_ACTOR_ID_MAX_LENGTH,
  LOCAL_ACTOR_ID_PATTERN,
  NAMESPACE_NAME_MAX_LENGTH,
  NAMESPACE_NAME_PATTERN,
} from './namespaced-actor-id.js';
import type { Kind } from './config-object.js';
import {
  actorGrantSpecSchema,
  capabilitySpecSchema,
  grantConstraintsSchema,
  policySpecSchema,
} from './spec-schemas.js';
import { CAPABILITY_NAME_MAX_LENGTH, RISK_LEVELS } from './vocabulary.js';

/**
 * JSON Schemas of the tenancy kinds' specs (issue #38). The namespaced kinds reuse the
 * cluster kinds' schemas: one source of truth, so they can never drift apart.
 */

/** A capability name, or a trailing-".*" pattern: `db.*`, `db.admin.*`, `tickets.create`. */
export const CAPABILITY_PATTERN_PATTERN = '^[a-z][a-z0-9_-]*(\\.[a-z][a-z0-9_-]*)*\\.([a-z][a-z0-9_-]*|\\*)$';

const riskLevel = { type: 'string', enum: [...RISK_LEVELS] } as const;

export const delegationSpecSchema = {
  type: 'object',
  required: ['namespaces', 'capabilities', 'maxRiskLevel'],
  additionalProperties: false,
  properties: {
    namespaces: {
      type: 'array',
      minItems: 1,
      maxItems: 1024,
      description: 'The namespaces this delegation covers, by name.',
      items: { type: 'string', pattern: NAMESPACE_NAME_PATTERN, maxLength: NAMESPACE_NAME_MAX_LENGTH },
    },
    capabilities: {
      type: 'array',
      maxItems: 1024,
      description: 'Capability names, or trailing-".*" patterns, that the namespaces may grant.',
      items: { type: 'string', pattern: CAPABILITY_PATTERN_PATTERN, maxLength: CAPABILITY_NAME_MAX_LENGTH },
    },
    maxRiskLevel: {
      ...riskLevel,
      description: 'Capabilities riskier than this are never granted by the namespaces.',
    },
    rateLimit: {
      ...grantConstraintsSchema.properties.rateLimit,
      description: "One budget per namespace, shared by all its actors, on top of each grant's own.",
    },
    reviewers: {
      type: 'object',
      required: ['maxRiskLevel'],
      additionalProperties: false,
      properties: {
        maxRiskLevel: {
          ...riskLevel,
          description: 'Reviewers of the namespace may settle its escalations up to this risk level.',
        },
      },
    },
  },
} as const;

const clusterActor = actorGrantSpecSchema.properties.actor;

/** ActorGrant's schema, but the actor id is local: `bot` in namespace N is the actor `N/bot`. */
export const namespacedActorGrantSpecSchema = {
  ...actorGrantSpecSchema,
  properties: {
    ...actorGrantSpecSchema.properties,
    actor: {
      ...clusterActor,
      properties: {
        ...clusterActor.properties,
        id: {
          type: 'string',
          minLength: 1,
          maxLength: LOCAL_ACTOR_ID_MAX_LENGTH,
          pattern: LOCAL_ACTOR_ID_PATTERN,
          description: 'Local to the namespace: `bot` in namespace N is the actor `N/bot`.',
        },
      },
    },
  },
} as const;

export const TENANCY_SPEC_SCHEMAS = {
  Delegation: delegationSpecSchema,
  NamespacedPolicy: policySpecSchema,
  NamespacedActorGrant: namespacedActorGrantSpecSchema,
} as const;

/** The spec schema of every kind: manifests are validated with them, the CRDs embed them. */
export const SPEC_SCHEMAS = {
  Capability: capabilitySpecSchema,
  Policy: policySpecSchema,
  ActorGrant: actorGrantSpecSchema,
  ...TENANCY_SPEC_SCHEMAS,
} as const satisfies Record<Kind, unknown>;
