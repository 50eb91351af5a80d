import express, { type RequestHandler } from 'express';
import { ArbiterError } from '../model/index.js';

export const MAX_BODY_BYTES = 1024 * 1024;
const MAX_DEPTH = 32;
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

const parseJson = express.json({ limit: MAX_BODY_BYTES, strict: true, type: () => true });

/** application/json or application/<anything>+json, with or without parameters. */
const JSON_MEDIA_TYPE = /^application\/(?:[^\s/;]+\+)?json\s*(?:;|$)/i;

/**
 * JSON bodies only: 415 for another media type, 413 past 1 MiB, 400 for bad JSON,
 * nesting deeper than MAX_DEPTH, or prototype-pollution keys. No body at all is read as an
 * empty one, {} (as a Content-Length of 0 is, here and in the propose lane).
 */
export const jsonBody: RequestHandler = (req, res, next) => {
  // The header itself: req.is() answers null for a request without a body, whatever its type.
  const type = req.get('content-type');
  if (type === undefined || !JSON_MEDIA_TYPE.test(type)) {
    next(
      new ArbiterError(
        'UNSUPPORTED_MEDIA_TYPE',
        `expected Content-Type application/json, got ${type ?? 'none'}`,
      ),
    );
    return;
  }
  parseJson(req, res, (err?: unknown) => {
    if (err) {
      next(err);
      return;
    }
    req.body ??= {};
    const problem = bodyShapeProblem(req.body as unknown);
    next(problem ? new ArbiterError('INVALID_REQUEST', problem) : undefined);
  });
};

/**
 * What is wrong with a parsed body (too deep, a prototype-pollution key), if anything:
 * depth first, each object's own keys before its members, the last member first.
 */
export function bodyShapeProblem(root: unknown): string | undefined {
  return shapeProblem(root, 1);
}

// One key list per depth, reused: a body is walked on every request, and a fresh list per
// object was 0.4 KB of garbage per proposal. A depth's list is free again once its object's
// walk returns; a long one (a hostile body's) is dropped rather than kept.
const keysAtDepth: string[][] = [];
const KEPT_KEY_LIST = 64;

// Recursive, yet hostile nesting cannot overflow the stack: it stops at MAX_DEPTH.
function shapeProblem(value: unknown, depth: number): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  if (depth > MAX_DEPTH) return `request body nests deeper than ${MAX_DEPTH} levels`;
  const keys = (keysAtDepth[depth] ??= []);
  let count = 0;
  // A parsed body's prototypes have no enumerable members, so for-in sees its own keys only.
  for (const key in value) {
    if (FORBIDDEN_KEYS.has(key)) return `request body contains the forbidden key "${key}"`;
    keys[count++] = key;
  }
  if (count > KEPT_KEY_LIST) keysAtDepth[depth] = [];
  for (let i = count - 1; i >= 0; i--) {
    const problem = shapeProblem((value as Record<string, unknown>)[keys[i]!], depth + 1);
    if (problem) return problem;
  }
  return undefined;
}
