import type { CelEnv, parse } from '@bufbuild/cel';
import {
  BOOL,
  BYTES,
  DOUBLE,
  DYN,
  INT,
  NULL,
  STRING,
  TYPE,
  UINT,
  accepts,
  alternatives,
  comparable,
  fromCelType,
  listOf,
  mapOf,
  sameType,
  typeName,
  unionOf,
  type ConditionType,
} from './condition-type.js';

type ParsedExpr = ReturnType<typeof parse>;
/** The AST node type of @bufbuild/cel (from its transitive cel-spec package). */
type Expr = NonNullable<ParsedExpr['expr']>;
type ExprOf<Case extends Expr['exprKind']['case']> = Extract<Expr['exprKind'], { case: Case }>['value'];

export type CheckResult =
  { ok: true; type: ConditionType } | { ok: false; error: string; offset: number | undefined };

interface Overload {
  readonly target: ConditionType | undefined;
  readonly args: readonly ConditionType[];
  readonly result: ConditionType;
}

/** CEL type names are identifiers too (`type(x) == int`). */
const TYPE_NAMES: ReadonlySet<string> = new Set([
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
]);

class CheckError extends Error {
  constructor(
    message: string,
    readonly expr: Expr,
  ) {
    super(message);
  }
}

/**
 * The static type of a parsed condition, or the first type error in it: a function or
 * operator applied to types it has no overload for (`1 + "a"`), a field a schema does not
 * have, a comparison that can never be true (`"a" == 1`), a variable nobody declared. The
 * overloads are those of `env`, the evaluator's own function table, so what checks is
 * what evaluates. cel-go's checker is the model; @bufbuild/cel 0.6 has none that covers
 * more than constants and identifiers.
 */
export function checkCondition(
  parsed: ParsedExpr,
  env: CelEnv,
  variables: Readonly<Record<string, ConditionType>>,
): CheckResult {
  if (!parsed.expr) return { ok: false, error: 'the condition is empty', offset: undefined };
  try {
    return { ok: true, type: new Checker(overloadsOf(env), variables).check(parsed.expr) };
  } catch (err) {
    if (!(err instanceof CheckError)) throw err;
    return { ok: false, error: err.message, offset: parsed.sourceInfo?.positions[String(err.expr.id)] };
  }
}

const tables = new WeakMap<CelEnv, ReadonlyMap<string, readonly Overload[]>>();

function overloadsOf(env: CelEnv): ReadonlyMap<string, readonly Overload[]> {
  let table = tables.get(env);
  if (table === undefined) {
    const byName = new Map<string, Overload[]>();
    for (const func of env.funcs) {
      const overload: Overload = {
        target: func.target && fromCelType(func.target),
        args: func.arguments.map(fromCelType),
        result: fromCelType(func.result),
      };
      byName.set(func.name, [...(byName.get(func.name) ?? []), overload]);
    }
    table = byName;
    tables.set(env, table);
  }
  return table;
}

class Checker {
  /** Variables bound by macros (`all(x, ...)`), innermost last. */
  private readonly scopes: Map<string, ConditionType>[] = [];

  constructor(
    private readonly overloads: ReadonlyMap<string, readonly Overload[]>,
    private readonly variables: Readonly<Record<string, ConditionType>>,
  ) {}

  check(expr: Expr): ConditionType {
    const kind = expr.exprKind;
    switch (kind.case) {
      case 'constExpr':
        return constantType(kind.value);
      case 'identExpr':
        return this.identifier(expr, kind.value.name);
      case 'selectExpr':
        return this.select(expr, kind.value);
      case 'callExpr':
        return this.call(expr, kind.value);
      case 'listExpr':
        return listOf(common(kind.value.elements.map((e) => this.check(e))));
      case 'structExpr':
        return this.struct(expr, kind.value);
      case 'comprehensionExpr':
        return this.comprehension(expr, kind.value);
      default:
        throw new CheckError('the condition has an expression the checker does not know', expr);
    }
  }

  private identifier(expr: Expr, name: string): ConditionType {
    for (let i = this.scopes.length - 1; i >= 0; i--) {
      const bound = this.scopes[i]!.get(name);
      if (bound !== undefined) return bound;
    }
    if (Object.hasOwn(this.variables, name)) return this.variables[name]!;
    if (TYPE_NAMES.has(name)) return TYPE;
    const names = Object.keys(this.variables).join(', ');
    throw new CheckError(`unknown variable '${name}' (conditions may use ${names})`, expr);
  }

  private select(expr: Expr, select: ExprOf<'selectExpr'>): ConditionType {
    const operand = this.check(select.operand!);
    const field = this.field(expr, operand, select.field);
    return select.testOnly ? BOOL : field;
  }

  /** The type of `operand.name` (and of `operand['name']`). */
  private field(expr: Expr, operand: ConditionType, name: string): ConditionType {
    switch (operand.kind) {
      case 'dyn':
      case 'union':
        return DYN;
      case 'record': {
        const type = operand.fields.get(name) ?? operand.others;
        if (type !== undefined) return type;
        const known = [...operand.fields.keys()].join(', ');
        throw new CheckError(
          `undefined field '${name}' (the object has ${known || 'no fields'} and no others)`,
          expr,
        );
      }
      case 'map':
        if (accepts(operand.key, STRING)) return operand.value;
    }
    throw new CheckError(`type '${typeName(operand)}' has no field '${name}'`, expr);
  }

  private call(expr: Expr, call: ExprOf<'callExpr'>): ConditionType {
    const target = call.target && this.check(call.target);
    const args = call.args.map((a) => this.check(a));
    switch (call.function) {
      case '@not_strictly_false': // the loop condition of a macro
      case '_&&_':
      case '_||_':
        for (const [i, arg] of args.entries())
          this.expectBool(call.args[i]!, arg, `'${operatorName(call.function)}'`);
        return BOOL;
      case '_?_:_':
        this.expectBool(call.args[0]!, args[0]!, 'the condition of ?:');
        return unionOf([args[1]!, args[2]!]);
      case '_==_':
      case '_!=_':
      case '@in':
        // The table's `(dyn, dyn)` would let `"a" == 1` through: it can never be true.
        if (!canBeTrue(call.function, args[0]!, args[1]!))
          throw noOverload(expr, call.function, undefined, args);
        return BOOL;
      case '_[_]':
        return this.index(expr, args[0]!, args[1]!, call.args[1]!);
      default:
        return this.overloaded(expr, call.function, target, args);
    }
  }

  private index(expr: Expr, operand: ConditionType, key: ConditionType, keyExpr: Expr): ConditionType {
    const constant = keyExpr.exprKind.case === 'constExpr' ? keyExpr.exprKind.value.constantKind : undefined;
    switch (operand.kind) {
      case 'dyn':
      case 'union':
        return DYN;
      case 'list':
        if ([INT, UINT, DYN].some((t) => sameType(t, key))) return operand.element;
        break;
      case 'map':
        if (comparable(operand.key, key)) return operand.value;
        break;
      case 'record':
        if (constant?.case === 'stringValue') return this.field(expr, operand, constant.value);
        if (accepts(STRING, key)) return DYN;
    }
    throw noOverload(expr, '_[_]', undefined, [operand, key]);
  }

  /** A function or operator of the environment's table. */
  private overloaded(
    expr: Expr,
    name: string,
    target: ConditionType | undefined,
    args: readonly ConditionType[],
  ): ConditionType {
    const candidates = (this.overloads.get(name) ?? []).filter(
      (o) => (o.target === undefined) === (target === undefined) && o.args.length === args.length,
    );
    if (candidates.length === 0)
      throw new CheckError(
        target === undefined
          ? `unknown function '${name}' with ${args.length} argument(s)`
          : `unknown method '${name}' with ${args.length} argument(s)`,
        expr,
      );
    // A union operand (a JSON number: int or double) must work whichever it is at run time.
    const results = combinations(target === undefined ? args : [target, ...args]).map((operands) => {
      const [t, a] = target === undefined ? [undefined, operands] : [operands[0], operands.slice(1)];
      const matches = candidates.filter(
        (o) => (t === undefined || accepts(o.target!, t)) && o.args.every((p, i) => accepts(p, a[i]!)),
      );
      if (matches.length === 0) throw noOverload(expr, name, t, a, target, args);
      // A dyn operand may match several: the result is known only when they agree.
      return common(matches.map((m) => m.result));
    });
    return unionOf(results);
  }

  private struct(expr: Expr, struct: ExprOf<'structExpr'>): ConditionType {
    const keys: ConditionType[] = [];
    const values: ConditionType[] = [];
    for (const entry of struct.entries) {
      if (entry.keyKind.case === 'mapKey') keys.push(this.check(entry.keyKind.value));
      values.push(this.check(entry.value!));
    }
    // A message (`google.protobuf.Duration{seconds: 5}`): its fields are the registry's business.
    if (struct.messageName !== '') return DYN;
    const key = common(keys);
    if (!alternatives(key).every((k) => [INT, UINT, BOOL, STRING, DYN].some((t) => sameType(t, k))))
      throw new CheckError(`a map key must be an int, uint, bool or string, not ${typeName(key)}`, expr);
    return mapOf(key, common(values));
  }

  private comprehension(expr: Expr, loop: ExprOf<'comprehensionExpr'>): ConditionType {
    const range = this.check(loop.iterRange!);
    const accumulator = this.check(loop.accuInit!);
    // The parser's macros bind one variable (iterVar2 stays ''): a list's elements or a map's keys.
    const scope = new Map<string, ConditionType>([
      [loop.accuVar, accumulator],
      [loop.iterVar, iterationType(expr, range)],
    ]);
    this.scopes.push(scope);
    try {
      this.check(loop.loopCondition!);
      scope.set(loop.accuVar, common([accumulator, this.check(loop.loopStep!)]));
      return this.check(loop.result!);
    } finally {
      this.scopes.pop();
    }
  }

  private expectBool(expr: Expr, type: ConditionType, what: string): void {
    if (!isBoolean(type))
      throw new CheckError(`${what} needs a bool, but this is ${describeType(type)}`, expr);
  }
}

/** A condition's result, `&&`'s operands: bool, or dyn (checked when evaluated). */
export function isBoolean(type: ConditionType): boolean {
  return alternatives(type).every((t) => t.kind === 'dyn' || sameType(t, BOOL));
}

export function describeType(type: ConditionType): string {
  const name = typeName(type);
  return type.kind === 'union' ? `one of ${name}` : `a value of type ${name}`;
}

function constantType(constant: ExprOf<'constExpr'>): ConditionType {
  switch (constant.constantKind.case) {
    case 'boolValue':
      return BOOL;
    case 'int64Value':
      return INT;
    case 'uint64Value':
      return UINT;
    case 'doubleValue':
      return DOUBLE;
    case 'stringValue':
      return STRING;
    case 'bytesValue':
      return BYTES;
    case 'nullValue':
      return NULL;
    default:
      return DYN;
  }
}

/** The type of values that are each of one of these types: a list literal's elements, a map's keys. */
function common(types: readonly ConditionType[]): ConditionType {
  const [first, ...rest] = types;
  return first !== undefined && rest.every((t) => sameType(t, first)) ? first : DYN;
}

function canBeTrue(operator: string, left: ConditionType, right: ConditionType): boolean {
  if (operator !== '@in') return comparable(left, right);
  return alternatives(right).some((container) => isMember(left, container));
}

/** Whether `value in container` can be true: it compares value with a list's elements or a map's keys. */
function isMember(value: ConditionType, container: ConditionType): boolean {
  switch (container.kind) {
    case 'dyn':
      return true;
    case 'list':
      return comparable(value, container.element);
    case 'map':
      return comparable(value, container.key);
    case 'record':
      return comparable(value, STRING);
    default:
      return false; // nothing is in a string or an int
  }
}

/** The types of a comprehension's two variables: index and element of a list, key and value of a map. */
function iterationType(expr: Expr, range: ConditionType): ConditionType {
  switch (range.kind) {
    case 'dyn':
    case 'union':
      return DYN;
    case 'list':
      return range.element;
    case 'map':
      return range.key;
    case 'record':
      return STRING;
    default:
      throw new CheckError(`a macro can iterate over a list or a map, not over ${describeType(range)}`, expr);
  }
}

function combinations(operands: readonly ConditionType[]): ConditionType[][] {
  return operands.reduce<ConditionType[][]>(
    (sofar, operand) => sofar.flatMap((prefix) => alternatives(operand).map((t) => [...prefix, t])),
    [[]],
  );
}

/** `_+_` reads `+` in messages, as the author wrote it. */
function operatorName(name: string): string {
  if (name === '@in') return 'in';
  if (name === '_[_]') return '[]';
  return name.replace(/^_(.+)_$/, '$1').replace(/^(.+)_$/, '$1');
}

function noOverload(
  expr: Expr,
  name: string,
  target: ConditionType | undefined,
  args: readonly ConditionType[],
  declaredTarget = target,
  declaredArgs = args,
): CheckError {
  const applied = (t: ConditionType | undefined, a: readonly ConditionType[]) =>
    `${t === undefined ? '' : `${typeName(t)}.`}(${a.map(typeName).join(', ')})`;
  const actual = applied(target, args);
  const declared = applied(declaredTarget, declaredArgs);
  const note =
    actual === declared ? '' : ` (one case of ${declared}: each may be any of its types at run time)`;
  return new CheckError(
    `found no matching overload for '${operatorName(name)}' applied to ${actual}${note}`,
    expr,
  );
}
