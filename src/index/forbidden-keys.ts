const FORBIDDEN = new Set(['__proto__', 'constructor']);

/**
 * The JSON path of the first key that could poison prototypes when the object is later
 * merged or spread, or undefined. Iterative, so deep nesting cannot overflow the stack.
 */
export function findForbiddenKey(value: unknown, root: string): string | undefined {
  const stack: Array<{ value: unknown; path: string }> = [{ value, path: root }];
  while (stack.length > 0) {
    const item = stack.pop()!;
    if (item.value === null || typeof item.value !== 'object') continue;
    if (Array.isArray(item.value)) {
      item.value.forEach((element, i) => stack.push({ value: element, path: `${item.path}[${i}]` }));
      continue;
    }
    for (const key of Object.keys(item.value)) {
      const path = `${item.path}.${key}`;
      if (FORBIDDEN.has(key)) return path;
      stack.push({ value: (item.value as Record<string, unknown>)[key], path });
    }
  }
  return undefined;
}
