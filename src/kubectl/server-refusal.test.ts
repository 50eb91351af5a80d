import { describe, expect, it } from 'vitest';
import { serverRefusal } from './server-refusal.js';

const body = (code: string, message: string) => ({ error: { code, message, request_id: 'r' } });

describe('serverRefusal: an error response as one line', () => {
  it.each([
    [
      401,
      body('UNAUTHENTICATED', 'the presented key is not valid'),
      'Arbiter did not accept the token (401 UNAUTHENTICATED): the presented key is not valid; check --token, ARBITER_TOKEN or the kubeconfig user',
    ],
    [
      403,
      body('FORBIDDEN', 'key "a" lacks the scope governance:review'),
      'not allowed (403 FORBIDDEN): key "a" lacks the scope governance:review',
    ],
    [404, body('NOT_FOUND', 'no decision x'), 'not found (404 NOT_FOUND): no decision x'],
    [
      404,
      body('NOT_FOUND', 'no route for GET /api/v1/governance/pending'),
      'not found (404 NOT_FOUND): no route for GET /api/v1/governance/pending; the server may be older than this plugin',
    ],
    [
      405,
      body('METHOD_NOT_ALLOWED', 'DELETE is not allowed on /api/v1/x; allowed: GET, HEAD'),
      'Arbiter answered 405 (405 METHOD_NOT_ALLOWED): DELETE is not allowed on /api/v1/x; allowed: GET, HEAD; the server may be older than this plugin',
    ],
    [
      409,
      body('CONFLICT', 'decision x is already approved'),
      'conflict (409 CONFLICT): decision x is already approved',
    ],
    [
      503,
      body('UNAVAILABLE', 'audit log unavailable'),
      'Arbiter is unavailable (503 UNAVAILABLE): audit log unavailable; try again shortly',
    ],
    [502, '<html>\n<body>Bad gateway</body>', 'Arbiter answered 502 (502): <html>'],
    [500, '', 'Arbiter answered 500 (500): Internal Server Error'],
  ])('%i', (status, answer, line) => {
    const error = serverRefusal(status, status === 500 ? 'Internal Server Error' : '', answer);
    expect(error.message).toBe(line);
    expect(error.status).toBe(status);
    expect(error.exitCode).toBe(1);
  });
});
