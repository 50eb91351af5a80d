import { celEnv, isCelError, parse, plan, type CelInput } from '@bufbuild/cel';
import { rewriteAliases } from './cel-aliases.js';
import { checkCondition, describeType, isBoolean } from './check-condition.js';
import { conditionVariableTypes, type ConditionVariable } from './condition-variables.js';
import { parameterType } from './parameter-type.js';

/** The CEL variables of a condition, already converted to CEL values (see engine/cel-bindings). */
export type ConditionBindings = Record<ConditionVariable, CelInput>;

export type ConditionResult = { ok: true; matched: boolean } | { ok: false; error: string };

/** A condition parsed and planned once, evaluated many times. */
export interface CompiledCondition {
  readonly source: string;
  evaluate(bindings: ConditionBindings): ConditionResult;
}

export type CompileResult = { ok: true; condition: CompiledCondition } | { ok: false; error: string };

// One environment for every condition: the standard library, variables bound at evaluation.
const env = celEnv();

/**
 * Parses, type-checks and plans a condition. `parameterSchema` is the parameter schema of
 * the rule's capability: `parameters` is typed from it (parameter-type.ts); without one,
 * as for a capability not registered yet, `parameters` is a map of dyn values.
 */
export function compileCondition(source: string, parameterSchema?: Record<string, unknown>): CompileResult {
  let program: ReturnType<typeof plan>;
  try {
    const parsed = parse(rewriteAliases(source));
    const checked = checkCondition(parsed, env, conditionVariableTypes(parameterType(parameterSchema)));
    if (!checked.ok) return { ok: false, error: at(source, checked.offset, checked.error) };
    if (!isBoolean(checked.type))
      return {
        ok: false,
        error: `a condition must be a bool, but this one is ${describeType(checked.type)}`,
      };
    program = plan(env, parsed);
  } catch (err) {
    return { ok: false, error: err instanceof Error ? err.message : String(err) };
  }
  return { ok: true, condition: { source, evaluate: (bindings) => run(program, bindings) } };
}

/** `<input>:line:column: message`, as the parser reports syntax errors. */
function at(source: string, offset: number | undefined, message: string): string {
  if (offset === undefined) return message;
  const before = source.slice(0, offset).split('\n');
  return `<input>:${before.length}:${before.at(-1)!.length + 1}: ${message}`;
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
