import type { RequestHandler } from 'express';
import { hasScope, type KeyRateLimiter, type Principal, type Scope } from '../auth/index.js';
import { ArbiterError } from '../model/index.js';

/** Turns a presented credential into a principal, or undefined when it is not valid. */
export interface Authenticator {
  authenticate(credential: string): Promise<Principal | undefined> | Principal | undefined;
}

/**
 * Bearer authentication, the scope check and the per-key rate limit, in that order:
 * an unknown caller learns nothing about scopes, and a rejected one costs no tokens.
 */
export function requireScope(
  authenticator: Authenticator,
  limiter: KeyRateLimiter,
  scope: Scope,
  now: () => number,
): RequestHandler {
  return async (req, res, next) => {
    const header = req.get('authorization');
    const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    if (!match?.[1]) {
      res.setHeader('WWW-Authenticate', 'Bearer realm="arbiter"');
      throw new ArbiterError(
        'UNAUTHENTICATED',
        'missing or malformed Authorization header; use "Bearer <key>"',
      );
    }
    const principal = await authenticator.authenticate(match[1]);
    if (!principal) {
      res.setHeader('WWW-Authenticate', 'Bearer realm="arbiter", error="invalid_token"');
      throw new ArbiterError('UNAUTHENTICATED', 'the presented key is not valid');
    }
    req.principal = principal;
    if (!hasScope(principal, scope)) {
      throw new ArbiterError('FORBIDDEN', `key "${principal.name}" lacks the scope ${scope}`);
    }
    const state = limiter.take(principal.name, now());
    res.setHeader('X-RateLimit-Limit', String(state.limit));
    res.setHeader('X-RateLimit-Remaining', String(state.remaining));
    res.setHeader('X-RateLimit-Reset', String(state.resetSeconds));
    if (!state.allowed) {
      res.setHeader('Retry-After', String(state.retryAfterSeconds));
      throw new ArbiterError(
        'RATE_LIMITED',
        `rate limit of key "${principal.name}" exceeded; retry after ${state.retryAfterSeconds} s`,
      );
    }
    next();
  };
}
