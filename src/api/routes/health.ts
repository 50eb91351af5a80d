import { Router } from 'express';
import type { ApiDependencies } from '../dependencies.js';

/** Liveness answers while the process serves; readiness names every check that fails. */
export function healthRoutes(deps: ApiDependencies): Router {
  const router = Router();
  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok', version: deps.version });
  });
  router.get('/readyz', (_req, res) => {
    const checks = deps.readiness.map((c) => ({ name: c.name, ...c.check() }));
    const ready = checks.every((c) => c.ready);
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not ready', checks });
  });
  return router;
}
