import type { Router } from 'express';

/**
 * What this reads of express 5's router (the `router` package, 2.x): its stack of layers,
 * each matching a path with `match()` as the router does when it dispatches, and holding
 * either a route (its `methods`) or a mounted router (`handle.stack`). Not a documented
 * API: allowed-methods.test.ts pins it against real routers.
 */
interface RouterLayer {
  match(path: string): false | { path: string };
  route?: { methods: Record<string, boolean | undefined> };
  handle: { stack?: RouterLayer[] };
}

/** A route of router.all(): it takes any method. */
const ANY_METHOD = '_all';

/**
 * The methods that the routes of `router` (and of the routers mounted in it) answer at
 * `path`, HEAD wherever GET is, sorted; undefined when a route there takes any method.
 * Read from the routes themselves, so it cannot drift from them.
 */
export function allowedMethods(router: Router, path: string): string[] | undefined {
  const methods = new Set<string>();
  const bounded = collect((router as unknown as { stack: RouterLayer[] }).stack, path, methods);
  return bounded ? [...methods].sort() : undefined;
}

/** Adds the methods of the routes matching `path` below `stack`; false if one takes any. */
function collect(stack: readonly RouterLayer[], path: string, into: Set<string>): boolean {
  for (const layer of stack) {
    const matched = matchOf(layer, path);
    if (!matched) continue;
    if (layer.route) {
      if (!addRouteMethods(layer.route.methods, into)) return false;
      continue;
    }
    // A mounted router sees the rest of the path, as the router strips a mount path.
    const rest = path.slice(matched.path.length);
    const inner = layer.handle.stack;
    if (inner && (rest === '' || rest.startsWith('/')) && !collect(inner, rest || '/', into)) return false;
  }
  return true;
}

function matchOf(layer: RouterLayer, path: string): false | { path: string } {
  try {
    return layer.match(path);
  } catch {
    return false; // a path that does not decode: no route takes it
  }
}

function addRouteMethods(methods: Record<string, boolean | undefined>, into: Set<string>): boolean {
  for (const [method, handled] of Object.entries(methods)) {
    if (!handled) continue;
    if (method === ANY_METHOD) return false;
    into.add(method.toUpperCase());
    if (method === 'get') into.add('HEAD');
  }
  return true;
}
