import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Express } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../src/api/openapi.js';
import { appRoutes, servedApp, type AppRoute } from '../support/app-routes.js';
import { REPO } from '../support/arbiter-process.js';

/** A route's section of docs/api.md: its `### \`METHOD /path\`` heading and the text under it. */
interface DocumentedRoute extends AppRoute {
  section: string;
}

const HEADING = /^### `([A-Z]+) (\/\S*)`$/;

function documentedRoutes(markdown: string): DocumentedRoute[] {
  const routes: DocumentedRoute[] = [];
  let current: DocumentedRoute | undefined;
  for (const line of markdown.split('\n')) {
    const heading = HEADING.exec(line);
    if (heading) {
      current = { method: heading[1]!, path: heading[2]!, section: '' };
      routes.push(current);
    } else if (/^#{1,3} /.test(line)) {
      current = undefined;
    } else if (current) {
      current.section += `${line}\n`;
    }
  }
  return routes;
}

const keyOf = (route: AppRoute) => `${route.method} ${route.path}`;
const sortedKeys = (routes: AppRoute[]) => [...new Set(routes.map(keyOf))].sort();

/** What the OpenAPI document says an operation needs: a scope, any credential, or nothing. */
function openApiAccess(operation: { description?: string; security?: unknown }): string {
  const scope = /Requires scope `([^`]+)`/.exec(operation.description ?? '')?.[1];
  if (scope) return `\`${scope}\``;
  return operation.security ? 'any valid credential' : 'none';
}

const openapi = buildOpenApiDocument('test');
const openApiOperations = Object.entries(openapi.paths).flatMap(([path, operations]) =>
  Object.entries(operations as Record<string, { description?: string; security?: unknown }>).map(
    ([method, operation]) => ({
      method: method.toUpperCase(),
      path: path.replace(/\{([^}]+)\}/g, ':$1'),
      access: openApiAccess(operation),
    }),
  ),
);

let served: Awaited<ReturnType<typeof servedApp>>;
let app: Express;
let documented: DocumentedRoute[];

beforeAll(async () => {
  served = await servedApp();
  app = served.app;
  documented = documentedRoutes(await readFile(join(REPO, 'docs/api.md'), 'utf8'));
});
afterAll(async () => {
  await served?.close();
});

describe('docs/api.md', () => {
  it('documents every route the server answers, and no route it does not', () => {
    const served = sortedKeys(appRoutes(app));
    const inDoc = sortedKeys(documented);
    expect(
      served.filter((k) => !inDoc.includes(k)),
      'served, but missing from docs/api.md',
    ).toEqual([]);
    expect(
      inDoc.filter((k) => !served.includes(k)),
      'in docs/api.md, but not served',
    ).toEqual([]);
    expect(documented.length, 'a route documented twice').toBe(inDoc.length);
  });

  it("states each route's scope as the OpenAPI document does", () => {
    for (const route of documented) {
      const stated = /^Scope: (.+)$/m.exec(route.section)?.[1];
      expect(stated, `${keyOf(route)} has no "Scope:" line`).toBeDefined();
      const operation = openApiOperations.find((o) => keyOf(o) === keyOf(route));
      if (operation) expect(stated, keyOf(route)).toBe(operation.access);
    }
  });
});

describe('the served OpenAPI document', () => {
  it('has every route but the console and MCP (which speak their own protocols), and no other', () => {
    const api = appRoutes(app).filter((r) => !r.path.startsWith('/console/') && !r.path.startsWith('/mcp/'));
    expect(sortedKeys(openApiOperations)).toEqual(sortedKeys(api));
  });
});
