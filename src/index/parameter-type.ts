import {
  BOOL,
  DOUBLE,
  DYN,
  INT,
  NULL,
  STRING,
  listOf,
  mapOf,
  recordOf,
  unionOf,
  type ConditionType,
} from './condition-type.js';

/** Parameters are always a JSON object; without a schema nothing more is known. */
export const ANY_PARAMETERS: ConditionType = mapOf(STRING, DYN);

/** Deeper schemas are typed dyn there: no stack overflow on a hostile schema. */
const MAX_DEPTH = 64;

const typed = new WeakMap<object, ConditionType>();

/**
 * The CEL type of `parameters` for a capability's parameter schema, as Kubernetes types
 * `self` from a CRD's OpenAPI schema: an object's properties become fields, `string`,
 * `integer`, `boolean`, `array` and `null` their CEL types. What the schema leaves open is
 * dyn. A `number` is int or double, as engine/cel-bindings.ts binds it: whole numbers are
 * ints. The engine checks parameters against the schema before any condition reads them.
 */
export function parameterType(schema: Record<string, unknown> | undefined): ConditionType {
  if (schema === undefined) return ANY_PARAMETERS;
  let type = typed.get(schema);
  if (type === undefined) {
    const own = schemaType(schema, 0);
    type = own.kind === 'dyn' ? ANY_PARAMETERS : own;
    typed.set(schema, type);
  }
  return type;
}

function schemaType(schema: unknown, depth: number): ConditionType {
  if (!isObject(schema) || depth >= MAX_DEPTH) return DYN;
  const names = Array.isArray(schema.type) ? (schema.type as unknown[]) : [schema.type];
  return unionOf(names.map((name) => typeOfName(name, schema, depth)));
}

function typeOfName(name: unknown, schema: Record<string, unknown>, depth: number): ConditionType {
  switch (name) {
    case 'string':
      return STRING;
    case 'integer':
      return INT;
    case 'number':
      return unionOf([INT, DOUBLE]);
    case 'boolean':
      return BOOL;
    case 'null':
      return NULL;
    case 'array':
      // A list of schemas (tuple form) types each position differently.
      return listOf(Array.isArray(schema.items) ? DYN : schemaType(schema.items, depth + 1));
    case 'object':
      return objectType(schema, depth);
    default:
      return DYN;
  }
}

function objectType(schema: Record<string, unknown>, depth: number): ConditionType {
  const others = otherKeysType(schema, depth);
  if (!isObject(schema.properties))
    return others === undefined ? recordOf([], undefined) : mapOf(STRING, others);
  const fields = Object.entries(schema.properties).map(
    ([name, property]) => [name, schemaType(property, depth + 1)] as const,
  );
  return recordOf(fields, others);
}

/** The type of keys that `properties` does not list; undefined when the schema allows none. */
function otherKeysType(schema: Record<string, unknown>, depth: number): ConditionType | undefined {
  // patternProperties may allow keys whatever additionalProperties says: leave them open.
  if (isObject(schema.patternProperties)) return DYN;
  if (schema.additionalProperties === false) return undefined;
  return schemaType(schema.additionalProperties, depth + 1);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
