import express, { Router } from 'express';
import { describe, expect, it } from 'vitest';
import { allowedMethods } from './allowed-methods.js';

/** Real express routers: what allowedMethods reads of them is not a documented API. */
function app() {
  const application = express();
  const ok: express.RequestHandler = (_req, res) => {
    res.end();
  };
  application.get('/metrics', ok);
  const api = Router();
  api.post('/items', ok);
  api.get('/items', ok);
  api.route('/items/:id').get(ok).put(ok).delete(ok);
  api.all('/anything', ok);
  application.use('/api', api);
  const nested = Router();
  nested.post('/:name', ok);
  const outer = Router();
  outer.use('/tools', nested);
  application.use(outer);
  application.use((_req, _res, next) => next()); // middleware: no methods of its own
  return application;
}

describe('allowedMethods', () => {
  const { router } = app();

  it.each([
    ['/metrics', ['GET', 'HEAD']],
    ['/api/items', ['GET', 'HEAD', 'POST']],
    ['/api/items/', ['GET', 'HEAD', 'POST']],
    ['/API/items', ['GET', 'HEAD', 'POST']],
    ['/api/items/42', ['DELETE', 'GET', 'HEAD', 'PUT']],
    ['/tools/notes', ['POST']],
    ['/api/items/42/more', []],
    ['/apix/items', []],
    ['/nothing', []],
    ['/api/items/%E0%A4%A', []],
  ])('%s: %j', (path, methods) => {
    expect(allowedMethods(router, path)).toEqual(methods);
  });

  it('is undefined where a route takes any method', () => {
    expect(allowedMethods(router, '/api/anything')).toBeUndefined();
  });
});
