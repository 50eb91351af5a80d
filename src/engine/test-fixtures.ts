import { buildIndex, type IndexSnapshot } from '../index/index.js';
import {
  API_VERSION,
  type ActorGrantObject,
  type ActorType,
  type CapabilityObject,
  type CapabilitySpec,
  type ConfigObject,
  type GrantConstraints,
  type PolicyObject,
  type PolicyRuleSpec,
  type Proposal,
} from '../model/index.js';

/** Builders for engine and index tests; not part of the public surface. */

export function capability(
  name: string,
  spec: Partial<CapabilitySpec> = {},
  creationTimestamp = '2024-01-01T00:00:00Z',
): CapabilityObject {
  return {
    apiVersion: API_VERSION,
    kind: 'Capability',
    metadata: { name: name.replace(/[._]/g, '-'), creationTimestamp },
    spec: { name, riskLevel: 'low', ...spec },
  };
}

export function policy(name: string, rules: PolicyRuleSpec[], enabled = true): PolicyObject {
  return { apiVersion: API_VERSION, kind: 'Policy', metadata: { name }, spec: { enabled, rules } };
}

export function grant(
  name: string,
  actorId: string,
  grants: Array<{ capability: string; constraints?: GrantConstraints }>,
  actorType?: ActorType,
): ActorGrantObject {
  return {
    apiVersion: API_VERSION,
    kind: 'ActorGrant',
    metadata: { name },
    spec: { actor: { id: actorId, ...(actorType ? { type: actorType } : {}) }, grants },
  };
}

export function proposal(
  capabilityName: string,
  parameters: Record<string, unknown> = {},
  actor: { id?: string; type?: ActorType } = {},
  context?: Proposal['context'],
): Proposal {
  return {
    actor: { id: actor.id ?? 'agent-1', type: actor.type ?? 'automation' },
    action: { capability: capabilityName, parameters },
    ...(context ? { context } : {}),
  };
}

/** A world with one low-risk capability granted to agent-1 plus the given extra objects. */
export function world(...extra: ConfigObject[]): IndexSnapshot {
  return buildIndex([
    capability('files.read', {
      parameterSchema: {
        type: 'object',
        properties: { path: { type: 'string' }, amount: { type: 'number' } },
        additionalProperties: true,
      },
    }),
    grant('agent-1-files', 'agent-1', [{ capability: 'files.read' }]),
    ...extra,
  ]);
}

export const NOON_UTC = new Date('2024-06-12T12:00:00Z'); // a Wednesday
