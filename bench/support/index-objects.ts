import {
  API_VERSION,
  type ActorGrantObject,
  type CapabilityObject,
  type ConfigObject,
  type PolicyObject,
} from '../../src/model/index.js';

/**
 * Validated objects for buildIndex, shaped as src/index/build-index.test.ts makes them:
 * `count` capabilities with a parameter schema, one policy with a CEL condition on each,
 * and one ActorGrant per capability, spread over `count / 20` actors.
 */
export function indexObjects(count: number): ConfigObject[] {
  const actors = Math.max(1, Math.floor(count / 20));
  const objects: ConfigObject[] = [];
  for (let i = 0; i < count; i++) {
    objects.push(
      capabilityObject(i),
      conditionPolicy(i, `parameters.n > ${i}`),
      grantObject(i, `actor-${i % actors}`),
    );
  }
  return objects;
}

/** Policy `p<i>` on capability `area.op<i>`, denying when `condition` holds. */
export function conditionPolicy(i: number, condition: string): PolicyObject {
  return {
    apiVersion: API_VERSION,
    kind: 'Policy',
    metadata: { name: `p${i}` },
    spec: { enabled: true, rules: [{ capability: `area.op${i}`, condition, outcome: 'DENY' }] },
  };
}

function capabilityObject(i: number): CapabilityObject {
  return {
    apiVersion: API_VERSION,
    kind: 'Capability',
    metadata: { name: `area-op${i}`, creationTimestamp: '2024-01-01T00:00:00Z' },
    spec: {
      name: `area.op${i}`,
      riskLevel: 'low',
      parameterSchema: { type: 'object', properties: { n: { type: 'integer' } } },
    },
  };
}

function grantObject(i: number, actorId: string): ActorGrantObject {
  return {
    apiVersion: API_VERSION,
    kind: 'ActorGrant',
    metadata: { name: `g${i}` },
    spec: { actor: { id: actorId }, grants: [{ capability: `area.op${i}` }] },
  };
}
