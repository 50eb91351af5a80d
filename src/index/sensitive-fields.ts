/**
 * Where a capability's parameter schema marks values sensitive (`x-arbiter-sensitive:
 * true` on a property, at any depth): a tree that follows the schema's structure, so
 * that the values at those places can be masked in everything stored or shown.
 */
export interface SensitiveFields {
  /** The value here is sensitive as a whole. */
  readonly whole: boolean;
  readonly properties: ReadonlyMap<string, SensitiveFields>;
  /** Every member not named in properties (additionalProperties, patternProperties). */
  readonly otherProperties: SensitiveFields | undefined;
  /** Every element of an array (items, prefixItems, contains). */
  readonly items: SensitiveFields | undefined;
}

export const SENSITIVE_KEYWORD = 'x-arbiter-sensitive';

/** Subschemas that apply to the same value: their markings add up. */
const SAME_VALUE = ['allOf', 'anyOf', 'oneOf'] as const;
const SAME_VALUE_SINGLE = ['if', 'then', 'else', 'not'] as const;
/** Recursion bound: schemas nest less; deeper parts are not searched. */
const MAX_DEPTH = 64;

interface Building {
  whole: boolean;
  properties: Map<string, Building>;
  otherProperties: Building | undefined;
  items: Building | undefined;
}

/** The sensitive places of a schema, or undefined when it marks none. */
export function sensitiveFieldsOf(schema: unknown): SensitiveFields | undefined {
  const root = empty();
  collect(schema, root, 0);
  return marks(root) ? withOthersInNamed(root) : undefined;
}

/**
 * The value with every sensitive place replaced by `mask(value)`. Shares what it does not
 * change; never changes its input.
 */
export function maskSensitive(
  value: unknown,
  fields: SensitiveFields,
  mask: (v: unknown) => unknown,
): unknown {
  if (fields.whole) return mask(value);
  if (Array.isArray(value)) {
    const items = fields.items;
    return items ? value.map((item) => maskSensitive(item, items, mask)) : value;
  }
  if (typeof value !== 'object' || value === null) return value;
  let copy: Record<string, unknown> | undefined;
  for (const [key, member] of Object.entries(value)) {
    const inner = fields.properties.get(key) ?? fields.otherProperties;
    if (!inner) continue;
    const masked = maskSensitive(member, inner, mask);
    if (masked === member) continue;
    copy ??= { ...(value as Record<string, unknown>) };
    copy[key] = masked;
  }
  return copy ?? value;
}

function empty(): Building {
  return { whole: false, properties: new Map(), otherProperties: undefined, items: undefined };
}

/**
 * A patternProperties mark applies to named members its pattern matches too: marks for
 * other members are added to the named ones (masking a little more is the safe side).
 */
function withOthersInNamed(node: Building): Building {
  const others =
    node.otherProperties && marks(node.otherProperties) ? withOthersInNamed(node.otherProperties) : undefined;
  const properties = new Map<string, Building>();
  for (const [name, child] of node.properties) properties.set(name, withOthersInNamed(merge(child, others)));
  return {
    whole: node.whole,
    properties,
    otherProperties: others,
    items: node.items && marks(node.items) ? withOthersInNamed(node.items) : undefined,
  };
}

function merge(a: Building, b: Building | undefined): Building {
  if (!b) return a;
  const properties = new Map(a.properties);
  for (const [name, child] of b.properties)
    properties.set(name, merge(properties.get(name) ?? empty(), child));
  return {
    whole: a.whole || b.whole,
    properties,
    otherProperties: a.otherProperties ? merge(a.otherProperties, b.otherProperties) : b.otherProperties,
    items: a.items ? merge(a.items, b.items) : b.items,
  };
}

function marks(node: Building | undefined): boolean {
  if (!node) return false;
  return (
    node.whole ||
    [...node.properties.values()].some(marks) ||
    marks(node.otherProperties) ||
    marks(node.items)
  );
}

function collect(schema: unknown, into: Building, depth: number): void {
  if (!isObject(schema) || depth > MAX_DEPTH) return;
  if (schema[SENSITIVE_KEYWORD] === true) into.whole = true;
  for (const sub of sameValueSchemas(schema)) collect(sub, into, depth + 1);
  if (isObject(schema.properties)) {
    for (const [name, sub] of Object.entries(schema.properties)) {
      const child = into.properties.get(name) ?? empty();
      collect(sub, child, depth + 1);
      into.properties.set(name, child);
    }
  }
  for (const sub of otherPropertySchemas(schema)) collect(sub, (into.otherProperties ??= empty()), depth + 1);
  for (const sub of itemSchemas(schema)) collect(sub, (into.items ??= empty()), depth + 1);
}

/** Subschemas that apply to the value itself: their markings add up. */
function sameValueSchemas(schema: Record<string, unknown>): unknown[] {
  return [
    ...SAME_VALUE.flatMap((key) => listAt(schema, key)),
    ...SAME_VALUE_SINGLE.map((key) => schema[key]),
  ];
}

function otherPropertySchemas(schema: Record<string, unknown>): unknown[] {
  const patterns = isObject(schema.patternProperties) ? Object.values(schema.patternProperties) : [];
  return [schema.additionalProperties, ...patterns];
}

function itemSchemas(schema: Record<string, unknown>): unknown[] {
  return [schema.items, schema.contains, ...listAt(schema, 'prefixItems')];
}

function listAt(schema: Record<string, unknown>, key: string): unknown[] {
  const value = schema[key];
  return Array.isArray(value) ? (value as unknown[]) : [];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
