import type { CelInput } from '@bufbuild/cel';
import type { ConditionBindings } from '../index/index.js';
import type { Proposal } from '../model/index.js';

/** Beyond this depth values are passed through unconverted (no stack overflow on hostile JSON). */
const MAX_DEPTH = 64;

/**
 * The CEL variables of semantics.md step 5. JSON numbers that are safe integers become CEL
 * ints (bigint), so `parameters.amount > 1000` and `parameters.count + 1 == 6` behave as
 * an author expects; other numbers stay doubles (CEL compares int and double directly).
 * Objects become Maps: plain-object keys such as `__proto__` cannot reach a prototype.
 */
export function conditionBindings(proposal: Proposal, now: Date): ConditionBindings {
  return {
    parameters: toCel(proposal.action.parameters, 0),
    actor: new Map<string, CelInput>([
      ['id', proposal.actor.id],
      ['type', proposal.actor.type],
    ]),
    context: new Map<string, CelInput>([
      ['session_id', proposal.context?.session_id ?? null],
      ['metadata', toCel(proposal.context?.metadata ?? {}, 0)],
    ]),
    time: new Map<string, CelInput>([
      ['hour', BigInt(now.getUTCHours())],
      ['minute', BigInt(now.getUTCMinutes())],
      ['day_of_week', BigInt((now.getUTCDay() + 6) % 7)],
    ]),
  };
}

function toCel(value: unknown, depth: number): CelInput {
  if (typeof value === 'number') return Number.isSafeInteger(value) ? BigInt(value) : value;
  if (value === null || typeof value !== 'object' || depth >= MAX_DEPTH) return value as CelInput;
  if (Array.isArray(value)) return value.map((v) => toCel(v, depth + 1));
  const entries: Array<[string, CelInput]> = [];
  for (const [key, v] of Object.entries(value)) if (v !== undefined) entries.push([key, toCel(v, depth + 1)]);
  return new Map(entries);
}
