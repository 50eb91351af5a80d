import type { CelType } from '@bufbuild/cel';

/**
 * The static type of a CEL expression in a condition, as the checker sees it (check-condition.ts).
 * `record` is a map with string keys whose known keys have their own types: a JSON Schema
 * object with `properties` (at run time it is a map, engine/cel-bindings.ts). `others` is
 * the type of the keys the schema does not list, undefined when it allows none. `union` is
 * a value that is one of several types at run time: a JSON Schema `number` is bound as an
 * int when it is whole and as a double otherwise.
 */
export type ConditionType =
  | { readonly kind: 'dyn' }
  | { readonly kind: 'scalar'; readonly name: ScalarName }
  | { readonly kind: 'object'; readonly name: string }
  | { readonly kind: 'list'; readonly element: ConditionType }
  | { readonly kind: 'map'; readonly key: ConditionType; readonly value: ConditionType }
  | {
      readonly kind: 'record';
      readonly fields: ReadonlyMap<string, ConditionType>;
      readonly others: ConditionType | undefined;
    }
  | { readonly kind: 'union'; readonly members: readonly ConditionType[] };

export type ScalarName = 'int' | 'uint' | 'double' | 'bool' | 'string' | 'bytes' | 'null_type' | 'type';

export const DYN: ConditionType = { kind: 'dyn' };
const scalar = (name: ScalarName): ConditionType => ({ kind: 'scalar', name });
export const INT = scalar('int');
export const UINT = scalar('uint');
export const DOUBLE = scalar('double');
export const BOOL = scalar('bool');
export const STRING = scalar('string');
export const BYTES = scalar('bytes');
export const NULL = scalar('null_type');
export const TYPE = scalar('type');

export const listOf = (element: ConditionType): ConditionType => ({ kind: 'list', element });
export const mapOf = (key: ConditionType, value: ConditionType): ConditionType => ({
  kind: 'map',
  key,
  value,
});
export const recordOf = (
  fields: Iterable<readonly [string, ConditionType]>,
  others: ConditionType | undefined,
): ConditionType => ({ kind: 'record', fields: new Map(fields), others });

/** The type of the values that may be any of `types`: one type when they agree, else a union. */
export function unionOf(types: readonly ConditionType[]): ConditionType {
  const members: ConditionType[] = [];
  for (const type of types.flatMap((t) => (t.kind === 'union' ? t.members : [t]))) {
    if (type.kind === 'dyn') return DYN;
    if (!members.some((m) => sameType(m, type))) members.push(type);
  }
  return members.length === 1 ? members[0]! : { kind: 'union', members };
}

/** The members of a union, or the type itself. */
export function alternatives(type: ConditionType): readonly ConditionType[] {
  return type.kind === 'union' ? type.members : [type];
}

export function sameType(a: ConditionType, b: ConditionType): boolean {
  return typeName(a) === typeName(b);
}

/** How CEL (and so error messages) names a type; a JSON Schema object shows its known keys. */
export function typeName(type: ConditionType): string {
  switch (type.kind) {
    case 'dyn':
      return 'dyn';
    case 'scalar':
    case 'object':
      return type.name;
    case 'list':
      return `list(${typeName(type.element)})`;
    case 'map':
      return `map(${typeName(type.key)}, ${typeName(type.value)})`;
    case 'record': {
      const fields = [...type.fields].map(([name, t]) => `${name}: ${typeName(t)}`);
      if (type.others !== undefined) fields.push(`...: ${typeName(type.others)}`);
      return `object{${fields.join(', ')}}`;
    }
    case 'union':
      return type.members.map(typeName).join(' or ');
  }
}

/** Whether a value of type `value` may be passed where `parameter` is declared (no unions here). */
export function accepts(parameter: ConditionType, value: ConditionType): boolean {
  if (parameter.kind === 'dyn' || value.kind === 'dyn') return true;
  switch (parameter.kind) {
    case 'scalar':
    case 'object':
      return value.kind === parameter.kind && value.name === parameter.name;
    case 'list':
      return value.kind === 'list' && accepts(parameter.element, value.element);
    case 'map':
      return acceptsAsMap(parameter, value);
    // Function signatures have no records or unions: only lists, maps, scalars and objects.
    default:
      return false;
  }
}

function acceptsAsMap(parameter: ConditionType & { kind: 'map' }, value: ConditionType): boolean {
  if (value.kind === 'map') return accepts(parameter.key, value.key) && accepts(parameter.value, value.value);
  if (value.kind !== 'record' || !accepts(parameter.key, STRING)) return false;
  const values = [...value.fields.values(), ...(value.others ? [value.others] : [])];
  return values.every((v) => alternatives(v).every((member) => accepts(parameter.value, member)));
}

const NUMERIC: ReadonlySet<string> = new Set(['int', 'uint', 'double']);

/**
 * Whether two values of these types can ever be equal (`==`, `in`): CEL compares numbers
 * of different types by value and anything with null; a string is never equal to an int.
 */
export function comparable(a: ConditionType, b: ConditionType): boolean {
  if (a.kind === 'union' || b.kind === 'union')
    return alternatives(a).some((x) => alternatives(b).some((y) => comparable(x, y)));
  if (isOpen(a) || isOpen(b)) return true;
  if (a.kind !== b.kind) return isMapLike(a) && isMapLike(b);
  return comparableOfOneKind(a, b);
}

function comparableOfOneKind<T extends ConditionType>(a: T, b: T): boolean {
  if (a.kind === 'scalar' && b.kind === 'scalar') return a.name === b.name || bothNumeric(a.name, b.name);
  if (a.kind === 'list' && b.kind === 'list') return comparable(a.element, b.element);
  if (a.kind === 'object' && b.kind === 'object') return a.name === b.name;
  return true; // maps and records: both maps at run time
}

const bothNumeric = (a: string, b: string) => NUMERIC.has(a) && NUMERIC.has(b);
/** dyn, or null: comparing with either may be true. */
const isOpen = (t: ConditionType) => t.kind === 'dyn' || (t.kind === 'scalar' && t.name === 'null_type');
const isMapLike = (t: ConditionType) => t.kind === 'map' || t.kind === 'record';

/** The checker's type for a type in a @bufbuild/cel function signature. */
export function fromCelType(type: CelType): ConditionType {
  switch (type.kind) {
    case 'scalar':
      return type.scalar === 'dyn' ? DYN : scalar(type.scalar);
    case 'list':
      return listOf(fromCelType(type.element));
    case 'map':
      return mapOf(fromCelType(type.key), fromCelType(type.value));
    case 'object':
      return { kind: 'object', name: type.name };
  }
}
