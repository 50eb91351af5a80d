import type { Express } from 'express';
import { pino } from 'pino';
import { createApp } from '../../src/api/app.js';
import type { ApiDependencies } from '../../src/api/dependencies.js';
import { ApiKeyRegistry } from '../../src/auth/index.js';
import { Metrics } from '../../src/metrics/index.js';
import { MemoryMcpSessions } from '../../src/mcp/sessions/index.js';
import { ToolProxy, type ToolProxyDeps } from '../../src/mcp/tool-proxy.js';
import { EXAMPLE_KEYS } from './arbiter-process.js';

/** One route the app answers: `GET /api/v1/policies/:id`, as express was given it. */
export interface AppRoute {
  method: string;
  path: string;
}

/** What the walk reads of express 5's router layers. */
interface Layer {
  rawPath?: string;
  route?: { path: string; methods: Record<string, boolean> };
  handle?: { stack?: Layer[] };
}

/**
 * The app of `arbiter serve` with the MCP tool proxy mounted. Building the routes touches
 * only the logger, metrics, version, authenticator and tool proxy (and the store it closes);
 * the other dependencies are used when a request is answered, which this app never is.
 */
export async function servedApp(): Promise<{ app: Express; close: () => Promise<void> }> {
  const logger = pino({ level: 'silent' });
  const sessions = new MemoryMcpSessions({ idleMs: 1000, maxSessions: 1 }, () => new Date());
  const toolProxy = new ToolProxy({ logger, sessions } as Partial<ToolProxyDeps> as ToolProxyDeps, {
    upstreams: [],
    timeoutMs: 1000,
    version: 'test',
  });
  const deps: Partial<ApiDependencies> = {
    logger,
    metrics: new Metrics(),
    version: 'test',
    authenticator: await ApiKeyRegistry.load(EXAMPLE_KEYS),
    toolProxy,
  };
  return { app: createApp(deps as ApiDependencies), close: () => toolProxy.close() };
}

/**
 * Every route of the app, walking mounted routers. A route for any path below its mount
 * (`/{*file}`) serves files (the console): it counts as `GET <mount>/`, as does a mounted
 * router without routes of its own.
 */
export function appRoutes(app: Express): AppRoute[] {
  return walk((app as unknown as { router: { stack: Layer[] } }).router.stack, '');
}

function walk(stack: Layer[], prefix: string): AppRoute[] {
  return stack.flatMap((layer): AppRoute[] => {
    if (layer.route) {
      return Object.keys(layer.route.methods)
        .filter((method) => layer.route!.methods[method])
        .map((method) => ({ method: method.toUpperCase(), path: prefix + filesBelow(layer.route!.path) }));
    }
    const inner = layer.handle?.stack;
    if (!inner) return [];
    const mount = prefix + (layer.rawPath === '/' || layer.rawPath === undefined ? '' : layer.rawPath);
    const routes = walk(inner, mount);
    return routes.length === 0 && mount !== prefix ? [{ method: 'GET', path: `${mount}/` }] : routes;
  });
}

/** `/{*file}` (any path below the mount) as `/`. */
function filesBelow(path: string): string {
  return /^\/\{\*\w+\}$/.test(path) ? '/' : path;
}
