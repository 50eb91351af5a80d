import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { Router } from 'express';
import { ArbiterError } from '../model/index.js';

/** Where `npm run build` puts the console's bundle: dist/console, beside dist/api. */
export const BUILT_CONSOLE_DIR = fileURLToPath(new URL('../console/', import.meta.url));

/**
 * The console's own files only, no inline script or style, no eval, and requests to this
 * server alone: what an injected string could do in the page stays inside these walls.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * The browser console (console/ in the repository, bundled into dist/console): static
 * files under a strict Content-Security-Policy. It talks to the public API like any client.
 */
export function consoleRoutes(dir: string = BUILT_CONSOLE_DIR): Router {
  const router = Router();
  router.use((req, res, next) => {
    res.setHeader('Content-Security-Policy', CONSOLE_CSP);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'no-referrer');
    res.setHeader('X-Frame-Options', 'DENY');
    // Relative asset URLs need the trailing slash.
    if (req.originalUrl.split('?')[0] === '/console') return res.redirect(301, '/console/');
    next();
  });
  // A GET route (not middleware): another method on a console path is then a 405.
  router.get(
    '/{*file}',
    express.static(dir, { index: 'index.html', fallthrough: true, setHeaders: noCache }),
    () => {
      const built = existsSync(join(dir, 'index.html'));
      throw new ArbiterError(
        'NOT_FOUND',
        built ? 'no such console file' : 'the console is not built: run `npm run build`',
      );
    },
  );
  return router;
}

/** Revalidate every time: the files are small and change with every build. */
function noCache(res: express.Response): void {
  res.setHeader('Cache-Control', 'no-cache');
}
