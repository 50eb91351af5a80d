import { describe, expect, it } from 'vitest';
import { ApiKeyRegistry, sha256Hex } from './api-keys.js';
import { KeyRateLimiter } from './key-rate-limiter.js';
import { hasScope, mayActAs } from './scopes.js';

describe('API keys', () => {
  const registry = ApiKeyRegistry.fromDocument({
    keys: [
      { name: 'admin', key: 'plaintext-key', scopes: ['admin'] },
      {
        name: 'agent',
        sha256: sha256Hex('agent-secret'),
        scopes: ['governance:propose'],
        actors: ['agent-1'],
      },
    ],
  });

  it('authenticates plaintext and hashed keys, nothing else', () => {
    expect(registry.authenticate('plaintext-key')?.name).toBe('admin');
    expect(registry.authenticate('agent-secret')?.name).toBe('agent');
    expect(registry.authenticate('wrong')).toBeUndefined();
    expect(registry.authenticate(sha256Hex('agent-secret'))).toBeUndefined();
  });

  it('admin implies every scope; actor binding limits proposals', () => {
    const admin = registry.authenticate('plaintext-key')!;
    const agent = registry.authenticate('agent-secret')!;
    expect(hasScope(admin, 'audit:read')).toBe(true);
    expect(hasScope(agent, 'audit:read')).toBe(false);
    expect(mayActAs(agent, 'agent-1')).toBe(true);
    expect(mayActAs(agent, 'agent-2')).toBe(false);
    expect(mayActAs(admin, 'anyone')).toBe(true);
  });

  it.each([
    [{ keys: [{ name: 'x', scopes: ['admin'] }] }, /must match exactly one/],
    [{ keys: [{ name: 'x', key: 'longenough', scopes: ['root'] }] }, /scopes/],
    [{ keys: [{ name: 'x', key: 'short', scopes: ['admin'] }] }, /key/],
    [
      {
        keys: [
          { name: 'x', key: 'longenough', scopes: ['admin'] },
          { name: 'x', key: 'longenough2', scopes: ['admin'] },
        ],
      },
      /duplicate key name/,
    ],
    [{ nokeys: [] }, /keys/],
  ])('rejects a bad keys file %#', (document, message) => {
    expect(() => ApiKeyRegistry.fromDocument(document)).toThrow(message);
  });
});

describe('per-key rate limit', () => {
  it('allows the burst, refuses the next, refills over time', () => {
    const limiter = new KeyRateLimiter(2, 3);
    const at = (ms: number) => limiter.take('k', ms);
    expect([at(0), at(0), at(0)].every((s) => s.allowed)).toBe(true);
    const refused = at(0);
    expect(refused).toMatchObject({ allowed: false, remaining: 0, retryAfterSeconds: 1 });
    expect(at(600).allowed).toBe(true);
    expect(limiter.take('other', 0).allowed).toBe(true);
  });
});
