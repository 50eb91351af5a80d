import { DYN, INT, STRING, mapOf, recordOf, type ConditionType } from './condition-type.js';

/** The variables a condition may use (semantics.md, step 5). */
export const CONDITION_VARIABLES = ['parameters', 'actor', 'context', 'time'] as const;

export type ConditionVariable = (typeof CONDITION_VARIABLES)[number];

/**
 * The types of the variables, as engine/cel-bindings.ts binds them; `parameters` comes from
 * the capability's parameter schema (parameter-type.ts). `context.session_id` is null when
 * the proposal has none: comparing it with null type-checks, as comparing anything does.
 */
export function conditionVariableTypes(parameters: ConditionType): Record<ConditionVariable, ConditionType> {
  return { parameters, actor: ACTOR, context: CONTEXT, time: TIME };
}

const ACTOR = recordOf(
  [
    ['id', STRING],
    ['type', STRING],
  ],
  undefined,
);

const CONTEXT = recordOf(
  [
    ['session_id', STRING],
    ['metadata', mapOf(STRING, DYN)],
  ],
  undefined,
);

const TIME = recordOf(
  [
    ['hour', INT],
    ['minute', INT],
    ['day_of_week', INT],
  ],
  undefined,
);
