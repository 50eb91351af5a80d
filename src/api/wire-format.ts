/**
 * The HTTP API speaks snake_case (service-interface.md), the objects camelCase (CRDs).
 * One mechanical mapping serves data and schemas alike, so the two cannot drift.
 * A capability's parameter schema is the user's own JSON Schema: never renamed.
 */
const OPAQUE_KEYS = new Set(['parameterSchema', 'parameter_schema']);

export function camelToSnake(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

export function snakeToCamel(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
}

function renameKeys(value: unknown, rename: (key: string) => string): unknown {
  if (Array.isArray(value)) return value.map((item) => renameKeys(item, rename));
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    out[rename(key)] = OPAQUE_KEYS.has(key) ? inner : renameKeys(inner, rename);
  }
  return out;
}

export function toWire<T>(value: T): unknown {
  return renameKeys(value, camelToSnake);
}

export function fromWire<T>(value: unknown): T {
  return renameKeys(value, snakeToCamel) as T;
}

/** A spec JSON Schema with its property names (and required lists) in snake_case. */
export function wireSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(wireSchema);
  if (typeof schema !== 'object' || schema === null) return schema;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(schema)) {
    if (key === 'properties' && typeof inner === 'object' && inner !== null) {
      out[key] = Object.fromEntries(
        Object.entries(inner as Record<string, unknown>).map(([name, sub]) => [
          camelToSnake(name),
          wireSchema(sub),
        ]),
      );
    } else if (key === 'required' && Array.isArray(inner)) {
      out[key] = inner.map((name) => camelToSnake(String(name)));
    } else if (key.startsWith('x-kubernetes-')) {
      continue;
    } else {
      out[key] = wireSchema(inner);
    }
  }
  return out;
}
