import type { parse } from '@bufbuild/cel';

/** The AST node type of @bufbuild/cel (from its transitive cel-spec package). */
type Expr = ReturnType<typeof parse>['expr'];

/** The variables a condition may use (semantics.md, step 5). */
export const CONDITION_VARIABLES = ['parameters', 'actor', 'context', 'time'] as const;

/** CEL type names are identifiers too (`type(x) == int`). */
const TYPE_NAMES = [
  'int',
  'uint',
  'double',
  'bool',
  'string',
  'bytes',
  'list',
  'map',
  'null_type',
  'type',
  'dyn',
];
const GLOBAL = new Set<string>([...CONDITION_VARIABLES, ...TYPE_NAMES]);

/**
 * The first identifier the expression reads that is neither a condition variable nor
 * bound by a macro (`all(x, ...)`): a typo such as `paramters.x` is caught when the policy
 * is applied rather than erroring on every request.
 */
export function unknownIdentifier(expr: Expr, bound: ReadonlySet<string> = GLOBAL): string | undefined {
  const kind = expr.exprKind;
  switch (kind.case) {
    case 'identExpr':
      return bound.has(kind.value.name) ? undefined : kind.value.name;
    case 'selectExpr':
      return kind.value.operand ? unknownIdentifier(kind.value.operand, bound) : undefined;
    case 'callExpr':
      return firstUnknown([kind.value.target, ...kind.value.args], bound);
    case 'listExpr':
      return firstUnknown(kind.value.elements, bound);
    case 'structExpr':
      return firstUnknown(
        kind.value.entries.flatMap((e) => [
          e.keyKind.case === 'mapKey' ? e.keyKind.value : undefined,
          e.value,
        ]),
        bound,
      );
    case 'comprehensionExpr': {
      const c = kind.value;
      // An unused iterVar2 is '', which no identifier is: binding it changes nothing.
      const inner = new Set([...bound, c.iterVar, c.iterVar2, c.accuVar]);
      return (
        firstUnknown([c.iterRange, c.accuInit], bound) ??
        firstUnknown([c.loopCondition, c.loopStep, c.result], inner)
      );
    }
    // Stryker disable next-line ConditionalExpression: falling out of the switch returns undefined too.
    default:
      return undefined;
  }
}

function firstUnknown(
  exprs: ReadonlyArray<Expr | undefined>,
  bound: ReadonlySet<string>,
): string | undefined {
  for (const e of exprs) {
    const found = e ? unknownIdentifier(e, bound) : undefined;
    if (found !== undefined) return found;
  }
  return undefined;
}
