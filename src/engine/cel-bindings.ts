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
  return new LazyBindings(proposal, now);
}

/**
 * Each variable is converted when a condition first reads it (CEL asks for variables by
 * name as it evaluates), then kept: most conditions read `parameters` only.
 */
class LazyBindings implements ConditionBindings {
  readonly #proposal: Proposal;
  readonly #now: Date;
  #parameters: CelInput | undefined;
  #actor: CelInput | undefined;
  #context: CelInput | undefined;
  #time: CelInput | undefined;

  constructor(proposal: Proposal, now: Date) {
    this.#proposal = proposal;
    this.#now = now;
  }

  get parameters(): CelInput {
    return (this.#parameters ??= toCel(this.#proposal.action.parameters, 0));
  }

  get actor(): CelInput {
    return (this.#actor ??= new Map<string, CelInput>([
      ['id', this.#proposal.actor.id],
      ['type', this.#proposal.actor.type],
    ]));
  }

  get context(): CelInput {
    const context = this.#proposal.context;
    return (this.#context ??= new Map<string, CelInput>([
      ['session_id', context?.session_id ?? null],
      ['metadata', toCel(context?.metadata ?? {}, 0)],
    ]));
  }

  get time(): CelInput {
    const now = this.#now;
    return (this.#time ??= new Map<string, CelInput>([
      ['hour', BigInt(now.getUTCHours())],
      ['minute', BigInt(now.getUTCMinutes())],
      ['day_of_week', BigInt((now.getUTCDay() + 6) % 7)],
    ]));
  }
}

function toCel(value: unknown, depth: number): CelInput {
  if (typeof value === 'number') return Number.isSafeInteger(value) ? BigInt(value) : value;
  if (value === null || typeof value !== 'object' || depth >= MAX_DEPTH) return value as CelInput;
  if (Array.isArray(value)) return value.map((v) => toCel(v, depth + 1));
  // Filled member by member: Object.entries would allocate a pair for each of them first.
  const map = new Map<string, CelInput>();
  for (const key in value) {
    const v = (value as Record<string, unknown>)[key];
    if (Object.hasOwn(value, key) && v !== undefined) map.set(key, toCel(v, depth + 1));
  }
  return map;
}
