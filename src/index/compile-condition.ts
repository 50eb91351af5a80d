import { celEnv, isCelError, parse, plan, type CelInput } from '@bufbuild/cel';
import { rewriteAliases } from './cel-aliases.js';
import { CONDITION_VARIABLES, unknownIdentifier } from './condition-identifiers.js';

/** The CEL variables of a condition, already converted to CEL values (see engine/cel-bindings). */
export type ConditionBindings = Record<(typeof CONDITION_VARIABLES)[number], CelInput>;

export type ConditionResult = { ok: true; matched: boolean } | { ok: false; error: string };

/** A condition parsed and planned once, evaluated many times. */
export interface CompiledCondition {
  readonly source: string;
  evaluate(bindings: ConditionBindings): ConditionResult;
}

export type CompileResult = { ok: true; condition: CompiledCondition } | { ok: false; error: string };

// One environment for every condition: the standard library, variables bound at evaluation.
const env = celEnv();

export function compileCondition(source: string): CompileResult {
  let program: ReturnType<typeof plan>;
  try {
    const parsed = parse(rewriteAliases(source));
    const unknown = unknownIdentifier(parsed.expr);
    if (unknown !== undefined)
      return {
        ok: false,
        error: `unknown variable '${unknown}' (conditions may use ${CONDITION_VARIABLES.join(', ')})`,
      };
    program = plan(env, parsed);
  } catch (err) {
    return { ok: false, error: err instanceof Error ? err.message : String(err) };
  }
  return { ok: true, condition: { source, evaluate: (bindings) => run(program, bindings) } };
}

function run(program: ReturnType<typeof plan>, bindings: ConditionBindings): ConditionResult {
  try {
    const value = program(bindings);
    if (isCelError(value)) return { ok: false, error: value.message };
    if (typeof value !== 'boolean')
      return { ok: false, error: `the condition evaluated to ${describe(value)}, not to a boolean` };
    return { ok: true, matched: value };
  } catch (err) {
    // The evaluator reports errors as values; this guards against a bug in it.
    return { ok: false, error: err instanceof Error ? err.message : String(err) };
  }
}

function describe(value: unknown): string {
  if (typeof value === 'string') return `the string ${JSON.stringify(value)}`;
  if (typeof value === 'number' || typeof value === 'bigint') return `the number ${value}`;
  if (value === null) return 'null';
  return `a value of type ${typeof value === 'object' ? 'list, map or message' : typeof value}`;
}
