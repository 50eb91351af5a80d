import type { IndexSnapshot } from '../index/index.js';
import { isNamespacedKind, type Kind, type ObjectStatus } from '../model/index.js';
import type { RawObject } from './resources.js';
import { TOOL_DEFINITION_CONDITION } from './tool-definition-conditions.js';
import type { SchemaProblem } from './validated-objects.js';

/** A condition as the CRDs define it (metav1.Condition). */
export interface StatusCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  observedGeneration?: number;
  lastTransitionTime: string;
}

/** The condition the controller owns. */
export interface ReadyCondition extends StatusCondition {
  type: 'Ready';
  status: 'True' | 'False';
}

/**
 * `.status` of the three kinds (the counts feed `kubectl get` columns). Ready comes first;
 * conditions of other types belong to other writers (ToolDefinitionCurrent, written by the
 * tool proxy) and are kept as they are.
 */
export interface ObjectStatusBody {
  observedGeneration?: number;
  conditions: [ReadyCondition, ...StatusCondition[]];
  ruleCount?: number;
  grantCount?: number;
}

const MESSAGE_MAX_LENGTH = 4096;

/** The controller's verdict on one object: from the index, or the schema problem that kept it out. */
export function verdictOf(
  kind: Kind,
  raw: RawObject,
  snapshot: IndexSnapshot,
  problem: SchemaProblem | undefined,
): ObjectStatus | undefined {
  const generation = raw.metadata?.generation;
  if (problem) {
    const serving =
      problem.servingGeneration !== undefined
        ? `; still serving generation ${problem.servingGeneration}`
        : '; not in use';
    return {
      ready: false,
      reason: 'InvalidSchema',
      message: problem.errors.join('; ') + serving,
      ...(generation !== undefined ? { observedGeneration: generation } : {}),
    };
  }
  return snapshot.status(kind, raw.metadata?.name ?? '', raw.metadata?.namespace);
}

/** The condition on a namespaced object naming capabilities its namespace may not govern. */
export const OUTSIDE_DELEGATION_CONDITION = 'OutsideDelegation';

/**
 * The status to write, keeping lastTransitionTime when Ready did not flip; undefined
 * when the object already says exactly this (no write: a write would come back as a
 * watch event and must not start a loop).
 */
export function desiredStatus(
  kind: Kind,
  raw: RawObject,
  verdict: ObjectStatus,
  now: Date,
): ObjectStatusBody | undefined {
  const current = raw.status as Partial<ObjectStatusBody> | undefined;
  const previous = current?.conditions?.find((c) => c.type === 'Ready');
  const status = verdict.ready ? 'True' : 'False';
  const generation = raw.metadata?.generation;
  const condition: ReadyCondition = {
    type: 'Ready',
    status,
    reason: verdict.reason,
    message: verdict.message.slice(0, MESSAGE_MAX_LENGTH),
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
    lastTransitionTime: transitionTime(previous, status, now),
  };
  const others =
    current?.conditions?.filter(
      (c) => c.type !== 'Ready' && c.type !== OUTSIDE_DELEGATION_CONDITION && stillApplies(raw, c),
    ) ?? [];
  const outside = outsideCondition(kind, current, verdict, generation, now);
  const desired: ObjectStatusBody = {
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
    conditions: [condition, ...(outside ? [outside] : []), ...others],
    ...countsOf(kind, raw),
  };
  return sameStatus(current, desired) ? undefined : desired;
}

/**
 * OutsideDelegation on a namespaced object in use: True (with the capabilities) when it
 * names some its namespace's Delegation does not cover, else False. None on an object
 * that is not in use.
 */
function outsideCondition(
  kind: Kind,
  current: Partial<ObjectStatusBody> | undefined,
  verdict: ObjectStatus,
  generation: number | undefined,
  now: Date,
): StatusCondition | undefined {
  if (!isNamespacedKind(kind) || !verdict.ready) return undefined;
  const previous = current?.conditions?.find((c) => c.type === OUTSIDE_DELEGATION_CONDITION);
  const status = verdict.outsideDelegation === undefined ? 'False' : 'True';
  return {
    type: OUTSIDE_DELEGATION_CONDITION,
    status,
    reason: status === 'True' ? 'OutsideDelegation' : 'WithinDelegation',
    message: (
      verdict.outsideDelegation ?? "every capability it names is within its namespace's Delegation"
    ).slice(0, MESSAGE_MAX_LENGTH),
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
    lastTransitionTime: transitionTime(previous, status, now),
  };
}

/**
 * Whether another writer's condition still describes the object: the tool proxy's
 * ToolDefinitionCurrent only while the Capability pins a tool (no proxy checks it after).
 */
function stillApplies(raw: RawObject, condition: StatusCondition): boolean {
  if (condition.type !== TOOL_DEFINITION_CONDITION) return true;
  return (raw.spec as { mcp?: unknown } | undefined)?.mcp !== undefined;
}

/** A condition's lastTransitionTime: kept while its status stays, else now (in seconds). */
export function transitionTime(
  previous: Pick<StatusCondition, 'status' | 'lastTransitionTime'> | undefined,
  status: StatusCondition['status'],
  now: Date,
): string {
  if (previous?.status === status && previous.lastTransitionTime) return previous.lastTransitionTime;
  return now.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function countsOf(kind: Kind, raw: RawObject): Pick<ObjectStatusBody, 'ruleCount' | 'grantCount'> {
  const spec = raw.spec as { rules?: unknown; grants?: unknown } | undefined;
  if (kind === 'Policy' || kind === 'NamespacedPolicy')
    return { ruleCount: Array.isArray(spec?.rules) ? spec.rules.length : 0 };
  if (kind === 'ActorGrant' || kind === 'NamespacedActorGrant')
    return { grantCount: Array.isArray(spec?.grants) ? spec.grants.length : 0 };
  return {};
}

function sameStatus(current: Partial<ObjectStatusBody> | undefined, desired: ObjectStatusBody): boolean {
  return current !== undefined && comparable(current) === comparable(desired);
}

/** The fields we own, in a fixed order (the server may return keys in any order). */
function comparable(status: Partial<ObjectStatusBody>): string {
  const conditions = (status.conditions ?? []).map((c) => [
    c.type,
    c.status,
    c.reason,
    c.message,
    c.observedGeneration,
    c.lastTransitionTime,
  ]);
  return JSON.stringify([status.observedGeneration, status.ruleCount, status.grantCount, conditions]);
}
