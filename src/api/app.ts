import type { RequestListener } from 'node:http';
import express, { type Express } from 'express';
import { consoleRoutes } from './console-routes.js';
import type { ApiDependencies } from './dependencies.js';
import { errorHandler, notFoundHandler } from './error-handler.js';
import { buildOpenApiDocument } from './openapi.js';
import { withProposeLane } from './propose-lane.js';
import { makeProposer } from './proposer.js';
import { requestContext } from './request-context.js';
import { auditRoutes } from './routes/audit.js';
import { auditProofRoutes } from './routes/audit-proofs.js';
import { configurationRoutes } from './routes/configuration.js';
import { governanceRoutes } from './routes/governance.js';
import { healthRoutes } from './routes/health.js';
import { makeGuard } from './handler.js';
import { jsonBody } from './json-body.js';
import { whoamiRoutes } from './routes/whoami.js';

/** The HTTP API, built only from injected dependencies. */
export function createApp(deps: ApiDependencies): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  app.use(requestContext(deps.logger, deps.metrics));
  app.use(healthRoutes(deps));
  const openapi = buildOpenApiDocument(deps.version);
  app.get('/api/v1/openapi.json', (_req, res) => {
    res.json(openapi);
  });
  app.get('/metrics', async (_req, res) => {
    res.setHeader('Content-Type', deps.metrics.registry.contentType);
    res.send(await deps.metrics.registry.metrics());
  });
  app.use('/api/v1', governanceRoutes(deps));
  app.use('/api/v1', configurationRoutes(deps));
  app.use('/api/v1', auditRoutes(deps));
  app.use('/api/v1', auditProofRoutes(deps));
  app.use('/api/v1', whoamiRoutes(deps));
  app.use('/console', consoleRoutes());
  // The tool proxy (mcp/): agents' MCP sessions, with the same credentials as propose.
  if (deps.toolProxy) app.use('/mcp', deps.toolProxy.router(makeGuard(deps)('governance:propose'), jsonBody));
  app.use(notFoundHandler);
  app.use(errorHandler);
  return app;
}

/** What the port serves: propose in its own lane, everything else through express. */
export function createApiListener(deps: ApiDependencies): RequestListener {
  return withProposeLane({ ...deps, propose: makeProposer(deps) }, createApp(deps));
}
