import type { RequestHandler } from 'express';
import { hasScope, type KeyRateLimiter, type Principal, type Scope } from '../auth/index.js';
import { ArbiterError } from '../model/index.js';

/** Turns a presented credential into a principal, or undefined when it is not valid. */
export interface Authenticator {
  authenticate(credential: string): Promise<Principal | undefined> | Principal | undefined;
}

/** Where the steps below put their response headers (express's res, or the propose lane's list). */
export type SetHeader = (name: string, value: string) => void;

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** Step 1: the caller behind an Authorization header, or UNAUTHENTICATED. */
export async function identifyCaller(
  authenticator: Authenticator,
  authorization: string | undefined,
  setHeader: SetHeader,
): Promise<Principal> {
  const credential = authorization ? BEARER.exec(authorization)?.[1] : undefined;
  if (!credential) {
    setHeader('WWW-Authenticate', 'Bearer realm="arbiter"');
    throw new ArbiterError(
      'UNAUTHENTICATED',
      'missing or malformed Authorization header; use "Bearer <key>"',
    );
  }
  const principal = await authenticator.authenticate(credential);
  if (!principal) {
    setHeader('WWW-Authenticate', 'Bearer realm="arbiter", error="invalid_token"');
    throw new ArbiterError('UNAUTHENTICATED', 'the presented key is not valid');
  }
  return principal;
}

/** Step 2: the scope check, then the per-key rate limit (a refused caller costs no tokens). */
export function permitCaller(
  principal: Principal,
  scope: Scope,
  limiter: KeyRateLimiter,
  nowMs: number,
  setHeader: SetHeader,
): void {
  if (!hasScope(principal, scope)) {
    throw new ArbiterError('FORBIDDEN', `key "${principal.name}" lacks the scope ${scope}`);
  }
  const state = limiter.take(principal.name, nowMs);
  setHeader('X-RateLimit-Limit', String(state.limit));
  setHeader('X-RateLimit-Remaining', String(state.remaining));
  setHeader('X-RateLimit-Reset', String(state.resetSeconds));
  if (!state.allowed) {
    setHeader('Retry-After', String(state.retryAfterSeconds));
    throw new ArbiterError(
      'RATE_LIMITED',
      `rate limit of key "${principal.name}" exceeded; retry after ${state.retryAfterSeconds} s`,
    );
  }
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
    const setHeader: SetHeader = (name, value) => res.setHeader(name, value);
    const principal = await identifyCaller(authenticator, req.get('authorization'), setHeader);
    req.principal = principal;
    permitCaller(principal, scope, limiter, now(), setHeader);
    next();
  };
}
