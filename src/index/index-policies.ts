import { objectKey, qualifiedName, type NamespacedPolicyObject, type PolicyObject } from '../model/index.js';
import type { ArtefactCache } from './artefact-cache.js';
import { compareNames } from './compare-names.js';
import { compileCondition } from './compile-condition.js';
import type { CompiledRule, IndexedCapability, IndexedPolicy } from './indexed-types.js';
import type { ObjectStatuses } from './object-statuses.js';

type PolicyCompileResult =
  { ok: true; rules: CompiledRule[] } | { ok: false; error: string; ruleIndex: number };

/** A Policy, or a NamespacedPolicy (its rules name it `namespace/name`). */
type AnyPolicy = PolicyObject | NamespacedPolicyObject;

export interface IndexedPolicies {
  /** By qualifiedName. */
  policies: Map<string, IndexedPolicy>;
  /** Rules of enabled, valid policies by capability, by policy name then rule index. */
  rules: Map<string, CompiledRule[]>;
}

/** Stands for "no parameter schema" in a policy's cache inputs: parameters are then a map of dyn. */
const NO_SCHEMA = Object.freeze({});

/**
 * Compiles every rule condition once, type-checked against its capability's parameter
 * schema (so a policy is compiled again when one of those schemas changes). A policy with
 * a condition that does not compile is not indexed at all (a half-applied policy could
 * lift a restriction its author meant).
 */
export function indexPolicies(
  objects: readonly AnyPolicy[],
  cache: ArtefactCache,
  statuses: ObjectStatuses,
  capabilities: ReadonlyMap<string, IndexedCapability>,
): IndexedPolicies {
  const policies = new Map<string, IndexedPolicy>();
  const rules = new Map<string, CompiledRule[]>();
  const isCapability = (name: string) => capabilities.has(name);
  const schemaOf = (capability: string) => capabilities.get(capability)?.spec.parameterSchema;
  for (const object of [...objects].sort((a, b) => compareNames(a.metadata.name, b.metadata.name))) {
    const name = qualifiedName(object);
    const schemas = object.spec.rules.map((rule) => schemaOf(rule.capability) ?? NO_SCHEMA);
    const compiled = cache.get<PolicyCompileResult>(objectKey(object), [object.spec, ...schemas], () =>
      compilePolicy(object, schemaOf),
    );
    const enabled = object.spec.enabled ?? true;
    const status = compiled.ok
      ? statusOfValid(object, statuses, isCapability, enabled)
      : statuses.set(
          object,
          'InvalidCondition',
          compiled.error,
          `spec.rules[${compiled.ruleIndex}].condition`,
        );
    policies.set(name, {
      name,
      spec: object.spec,
      enabled,
      createdAt: object.metadata.creationTimestamp,
      status,
    });
    if (!compiled.ok || !enabled) continue;
    for (const rule of compiled.rules) {
      const list = rules.get(rule.capability);
      if (list) list.push(rule);
      else rules.set(rule.capability, [rule]);
    }
  }
  return { policies, rules };
}

function compilePolicy(
  object: AnyPolicy,
  schemaOf: (capability: string) => Record<string, unknown> | undefined,
): PolicyCompileResult {
  const rules: CompiledRule[] = [];
  for (const [ruleIndex, rule] of object.spec.rules.entries()) {
    let condition: CompiledRule['condition'] = null;
    if (rule.condition !== undefined) {
      const result = compileCondition(rule.condition, schemaOf(rule.capability));
      if (!result.ok)
        return {
          ok: false,
          ruleIndex,
          error:
            `policy ${qualifiedName(object)}, rule ${ruleIndex} (capability ${rule.capability}): ` +
            `the condition does not compile: ${result.error}`,
        };
      condition = result.condition;
    }
    rules.push({
      policy: qualifiedName(object),
      ruleIndex,
      capability: rule.capability,
      priority: rule.priority ?? 0,
      outcome: rule.outcome,
      reviewTtlSeconds: rule.reviewTtlSeconds,
      condition,
      enforcement: object.spec.enforcementAction ?? 'enforce',
    });
  }
  return { ok: true, rules };
}

function statusOfValid(
  object: AnyPolicy,
  statuses: ObjectStatuses,
  isCapability: (name: string) => boolean,
  enabled: boolean,
) {
  const unknown = [...new Set(object.spec.rules.map((r) => r.capability).filter((c) => !isCapability(c)))];
  if (unknown.length > 0)
    return statuses.set(
      object,
      'UnknownCapability',
      `rules name capabilities that are not registered: ${unknown.join(', ')}; they apply once registered`,
      `spec.rules[${object.spec.rules.findIndex((r) => !isCapability(r.capability))}].capability`,
    );
  return statuses.set(
    object,
    'Accepted',
    enabled
      ? `${object.spec.rules.length} rule(s) compiled`
      : 'valid; disabled, so its rules are not evaluated',
  );
}
