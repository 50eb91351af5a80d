import { afterEach, describe, expect, it, vi } from 'vitest';
import { ArbiterError } from '../model/index.js';
import { ApiKeyRegistry } from './api-keys.js';
import type { Principal } from './scopes.js';
import {
  TokenReviewAuthenticator,
  type TokenReviewResult,
  type TokenReviewSettings,
} from './token-review-authenticator.js';

// Built inside the tests: a keys file that fails to load then fails a test, not the whole
// file before any test has run.
const listed = () =>
  ApiKeyRegistry.fromDocument({
    keys: [{ name: 'admin', key: 'plaintext-key', scopes: ['admin'] }],
    serviceAccounts: [
      { namespace: 'agents', name: 'planner', scopes: ['governance:propose'], actors: ['agent-1'] },
      { namespace: 'ops', name: 'auditor', scopes: ['audit:read'] },
    ],
  });

/** A JWT-shaped token per name: the authenticator sends nothing else to the API server. */
const jwt = (name: string) => `eyJhbGciOiJSUzI1NiJ9.${Buffer.from(name).toString('base64url')}.c2ln`;

/**
 * A fake API server: tokens it knows map to usernames; counts the reviews it was asked for.
 * hold() keeps every review unanswered until release() is called.
 */
function fakeReviewer(users: Record<string, string>) {
  const calls: string[] = [];
  let failure: Error | undefined;
  let held: Promise<void> | undefined;
  let release: () => void = () => undefined;
  const review = async (token: string): Promise<TokenReviewResult> => {
    calls.push(token);
    await held;
    if (failure) throw failure;
    const username = users[token];
    return username ? { authenticated: true, username } : { authenticated: false };
  };
  return {
    review,
    calls,
    fail: (err: Error | undefined) => (failure = err),
    hold: () => {
      held = new Promise((resolve) => (release = resolve));
    },
    release: () => release(),
  };
}

function setup(users: Record<string, string>, settings: Partial<TokenReviewSettings> = {}) {
  const clock = { ms: 0 };
  const reviewer = fakeReviewer(users);
  const authenticator = new TokenReviewAuthenticator(
    reviewer.review,
    listed().serviceAccounts,
    settings,
    () => clock.ms,
  );
  return { clock, reviewer, authenticator };
}

describe('ServiceAccount tokens (TokenReview)', () => {
  it('maps a listed ServiceAccount to its principal, scopes and actors', async () => {
    const { authenticator } = setup({ [jwt('p')]: 'system:serviceaccount:agents:planner' });
    const principal = await authenticator.authenticate(jwt('p'));
    expect(principal?.name).toBe('serviceaccount:agents/planner');
    expect([...principal!.scopes]).toEqual(['governance:propose']);
    expect([...principal!.actors!]).toEqual(['agent-1']);
  });

  it.each([
    ['an unlisted ServiceAccount', 'system:serviceaccount:agents:other'],
    ['a listed name in another namespace', 'system:serviceaccount:ops:planner'],
    ['a user that is not a ServiceAccount', 'alice'],
    ['a malformed ServiceAccount username', 'system:serviceaccount:agents:planner:extra'],
    // e.g. an OIDC user under --oidc-username-prefix=oidc: who chose this name
    ['a user whose name only ends like a ServiceAccount', 'oidc:system:serviceaccount:agents:planner'],
  ])('refuses %s', async (_, username) => {
    const { authenticator } = setup({ [jwt('t')]: username });
    expect(await authenticator.authenticate(jwt('t'))).toBeUndefined();
  });

  it('asks the directory on every request: a binding that appears or goes applies at once, cache or not', async () => {
    const clock = { ms: 0 };
    const reviewer = fakeReviewer({ [jwt('b')]: 'system:serviceaccount:agents-sandbox:agent' });
    const bound = new Map<string, Principal>();
    const authenticator = new TokenReviewAuthenticator(reviewer.review, bound, {}, () => clock.ms);
    // Nobody listed or bound: the token is not even sent out.
    expect(await authenticator.authenticate(jwt('b'))).toBeUndefined();
    expect(reviewer.calls).toEqual([]);
    const principal: Principal = {
      name: 'serviceaccount:agents-sandbox/agent',
      scopes: new Set(['governance:propose']),
    };
    bound.set('agents-sandbox/agent', principal);
    expect(await authenticator.authenticate(jwt('b'))).toBe(principal);
    bound.delete('agents-sandbox/agent');
    bound.set('other/x', principal); // someone is still bound, so tokens are reviewed
    clock.ms += 1_000; // well within the 30 s the review is cached
    expect(await authenticator.authenticate(jwt('b'))).toBeUndefined();
    expect(reviewer.calls).toHaveLength(1);
  });

  it('refuses what the API server does not authenticate, and sends no non-JWT to it', async () => {
    const { authenticator, reviewer } = setup({});
    expect(await authenticator.authenticate(jwt('unknown'))).toBeUndefined();
    expect(await authenticator.authenticate('not-a-jwt')).toBeUndefined();
    expect(await authenticator.authenticate('a.b.c.d')).toBeUndefined();
    expect(reviewer.calls).toEqual([jwt('unknown')]);
  });

  it('asks nothing when the keys file lists no ServiceAccount', async () => {
    const reviewer = fakeReviewer({ [jwt('p')]: 'system:serviceaccount:agents:planner' });
    const none = ApiKeyRegistry.fromDocument({ keys: [] }).serviceAccounts;
    const authenticator = new TokenReviewAuthenticator(reviewer.review, none);
    expect(await authenticator.authenticate(jwt('p'))).toBeUndefined();
    expect(reviewer.calls).toEqual([]);
  });

  it('caches accepted tokens for 30 s and refused ones for 5 s', async () => {
    const { authenticator, reviewer, clock } = setup({ [jwt('p')]: 'system:serviceaccount:agents:planner' });
    for (let i = 0; i < 5; i++) await authenticator.authenticate(jwt('p'));
    await authenticator.authenticate(jwt('bad'));
    await authenticator.authenticate(jwt('bad'));
    expect(reviewer.calls).toEqual([jwt('p'), jwt('bad')]);

    clock.ms = 5_001;
    await authenticator.authenticate(jwt('bad'));
    await authenticator.authenticate(jwt('p'));
    expect(reviewer.calls).toEqual([jwt('p'), jwt('bad'), jwt('bad')]);

    clock.ms = 30_001;
    expect((await authenticator.authenticate(jwt('p')))?.name).toBe('serviceaccount:agents/planner');
    expect(reviewer.calls.filter((t) => t === jwt('p'))).toHaveLength(2);
  });

  it('trusts a result for its TTL and not a millisecond longer', async () => {
    const { authenticator, reviewer, clock } = setup({ [jwt('p')]: 'system:serviceaccount:agents:planner' });
    await authenticator.authenticate(jwt('p'));
    clock.ms = 29_999;
    await authenticator.authenticate(jwt('p'));
    expect(reviewer.calls).toHaveLength(1);
    clock.ms = 30_000;
    await authenticator.authenticate(jwt('p'));
    expect(reviewer.calls).toHaveLength(2);
  });

  it('drops an expired result even when its new review fails', async () => {
    const { authenticator, reviewer, clock } = setup({ [jwt('p')]: 'system:serviceaccount:agents:planner' });
    await authenticator.authenticate(jwt('p'));
    expect(authenticator.cachedCount).toBe(1);
    clock.ms = 30_000;
    reviewer.fail(new Error('connect ECONNREFUSED'));
    await expect(authenticator.authenticate(jwt('p'))).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    expect(authenticator.cachedCount).toBe(0);
  });

  it('keeps at most maxEntries results, dropping the oldest', async () => {
    const users = Object.fromEntries(
      Array.from({ length: 10 }, (_, i) => [jwt(`t${i}`), 'system:serviceaccount:ops:auditor']),
    );
    const { authenticator, reviewer } = setup(users, { maxEntries: 3 });
    for (let i = 0; i < 10; i++) await authenticator.authenticate(jwt(`t${i}`));
    expect(authenticator.cachedCount).toBe(3);
    await authenticator.authenticate(jwt('t9'));
    expect(reviewer.calls).toHaveLength(10);
    await authenticator.authenticate(jwt('t0'));
    expect(reviewer.calls).toHaveLength(11);
  });

  it('shares one review among concurrent requests with the same token', async () => {
    const { authenticator, reviewer } = setup({ [jwt('p')]: 'system:serviceaccount:agents:planner' });
    reviewer.hold();
    const pending = Array.from({ length: 10 }, () => authenticator.authenticate(jwt('p')));
    reviewer.release();
    const principals = await Promise.all(pending);
    expect(principals.every((p) => p?.name === 'serviceaccount:agents/planner')).toBe(true);
    expect(reviewer.calls).toHaveLength(1);
  });

  it('fails closed with UNAVAILABLE when the review cannot be made, and caches no failure', async () => {
    const { authenticator, reviewer } = setup({ [jwt('p')]: 'system:serviceaccount:agents:planner' });
    const refused = new Error('connect ECONNREFUSED');
    reviewer.fail(refused);
    const failed = authenticator.authenticate(jwt('p'));
    await expect(failed).rejects.toBeInstanceOf(ArbiterError);
    await expect(failed).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      message: 'cannot verify the ServiceAccount token: TokenReview failed',
      cause: refused, // what went wrong, for the log
    });
    expect(authenticator.cachedCount).toBe(0);
    reviewer.fail(undefined);
    expect((await authenticator.authenticate(jwt('p')))?.name).toBe('serviceaccount:agents/planner');
  });

  it('fails closed with UNAVAILABLE whatever the reviewer throws, an ArbiterError of another kind too', async () => {
    const { authenticator, reviewer } = setup({ [jwt('p')]: 'system:serviceaccount:agents:planner' });
    const forbidden = new ArbiterError('FORBIDDEN', 'not allowed');
    reviewer.fail(forbidden);
    await expect(authenticator.authenticate(jwt('p'))).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      cause: forbidden,
    });
  });

  it('answers UNAVAILABLE when the review is too slow or too many are under way', async () => {
    const { authenticator, reviewer } = setup({}, { reviewTimeoutMs: 20, maxInFlight: 2 });
    reviewer.hold(); // answered only after the authenticator has given up
    const slow = [authenticator.authenticate(jwt('a')), authenticator.authenticate(jwt('b'))];
    await expect(authenticator.authenticate(jwt('c'))).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      message: 'too many ServiceAccount token reviews under way; retry',
    });
    for (const pending of slow) await expect(pending).rejects.toThrow(/more than 20 ms/);
    reviewer.release();
  });

  describe('with fake timers', () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    it('leaves no timer behind once a review is answered', async () => {
      vi.useFakeTimers();
      const { authenticator, reviewer } = setup({ [jwt('p')]: 'system:serviceaccount:agents:planner' });
      await authenticator.authenticate(jwt('p'));
      reviewer.fail(new Error('HTTP 500'));
      await expect(authenticator.authenticate(jwt('q'))).rejects.toMatchObject({ code: 'UNAVAILABLE' });
      // Each would keep the process up for reviewTimeoutMs, and a busy server holds thousands.
      expect(vi.getTimerCount()).toBe(0);
    });
  });

  it('never puts the token into an error', async () => {
    const { authenticator, reviewer } = setup({});
    reviewer.fail(new Error('HTTP 500'));
    const err = (await authenticator.authenticate(jwt('secret')).catch((e: unknown) => e)) as ArbiterError;
    expect(JSON.stringify({ message: err.message, cause: String(err.cause) })).not.toContain(jwt('secret'));
  });
});

describe('serviceAccounts in the API keys file', () => {
  it.each([
    [{ keys: [], serviceAccounts: [{ namespace: 'a', name: 'b' }] }, /scopes/],
    [{ keys: [], serviceAccounts: [{ namespace: 'A_B', name: 'b', scopes: ['admin'] }] }, /namespace/],
    [{ keys: [], serviceAccounts: [{ namespace: 'a', name: 'b', scopes: ['root'] }] }, /scopes/],
    [
      { keys: [], serviceAccounts: [{ namespace: 'a', name: 'b', scopes: ['admin'], extra: 1 }] },
      /additional/,
    ],
    [
      {
        keys: [],
        serviceAccounts: [
          { namespace: 'a', name: 'b', scopes: ['admin'] },
          { namespace: 'a', name: 'b', scopes: ['audit:read'] },
        ],
      },
      /listed twice/,
    ],
    [{ keys: [{ name: 'serviceaccount:a/b', key: 'longenough', scopes: ['admin'] }] }, /name/],
  ])('rejects a bad entry %#', (document, message) => {
    expect(() => ApiKeyRegistry.fromDocument(document)).toThrow(message);
  });

  it('is optional, and a ServiceAccount is not an API key', () => {
    const registry = listed();
    expect([...registry.serviceAccounts.keys()]).toEqual(['agents/planner', 'ops/auditor']);
    expect(registry.serviceAccounts.get('agents/planner')?.name).toBe('serviceaccount:agents/planner');
    expect(registry.authenticate('serviceaccount:agents/planner')).toBeUndefined();
    expect(ApiKeyRegistry.fromDocument({ keys: [] }).serviceAccounts.size).toBe(0);
  });
});

describe('any Kubernetes user (authenticateAnyUser, for RBAC)', () => {
  const PLANNER_GROUPS = ['system:serviceaccounts', 'system:serviceaccounts:agents', 'system:authenticated'];
  /** A fake API server that knows users with their groups. */
  function anyUserSetup(users: Record<string, { username: string; groups?: string[] }>) {
    const calls: string[] = [];
    const authenticator = new TokenReviewAuthenticator((token) => {
      calls.push(token);
      const user = users[token];
      return Promise.resolve(user ? { authenticated: true, ...user } : { authenticated: false });
    }, listed().serviceAccounts);
    return { authenticator, calls };
  }

  it('gives a listed ServiceAccount its scopes and actors, with its user for RBAC', async () => {
    const { authenticator } = anyUserSetup({
      [jwt('p')]: { username: 'system:serviceaccount:agents:planner', groups: PLANNER_GROUPS },
    });
    const principal = await authenticator.authenticateAnyUser(jwt('p'));
    expect(principal).toEqual({
      name: 'serviceaccount:agents/planner',
      scopes: new Set(['governance:propose']),
      actors: new Set(['agent-1']),
      kubernetes: { username: 'system:serviceaccount:agents:planner', groups: PLANNER_GROUPS },
    });
  });

  it('accepts users the directory does not know, with no scope, whatever their token looks like', async () => {
    const staticToken = 'a1b2c3d4e5f6a1b2c3d4e5f6a1b2c3d4e5f6a1b2c3d4e5f6';
    const { authenticator } = anyUserSetup({
      [jwt('i')]: { username: 'system:serviceaccount:agents:intruder', groups: PLANNER_GROUPS },
      [staticToken]: { username: 'alice', groups: ['reviewers'] },
      'ya29.a0AfH6SMB+x/y~z==': { username: 'carol@example.com' },
    });
    expect(await authenticator.authenticateAnyUser(jwt('i'))).toEqual({
      name: 'serviceaccount:agents/intruder',
      scopes: new Set(),
      kubernetes: { username: 'system:serviceaccount:agents:intruder', groups: PLANNER_GROUPS },
    });
    expect(await authenticator.authenticateAnyUser(staticToken)).toEqual({
      name: 'kubernetes:alice',
      scopes: new Set(),
      kubernetes: { username: 'alice', groups: ['reviewers'] },
    });
    expect((await authenticator.authenticateAnyUser('ya29.a0AfH6SMB+x/y~z=='))?.kubernetes).toEqual({
      username: 'carol@example.com',
      groups: [],
    });
    // The same tokens are no credential where only listed or bound ServiceAccounts are.
    expect(await authenticator.authenticate(jwt('i'))).toBeUndefined();
    expect(await authenticator.authenticate(staticToken)).toBeUndefined();
  });

  it('refuses what the API server does not authenticate, and sends no token that cannot be one', async () => {
    const { authenticator, calls } = anyUserSetup({});
    expect(await authenticator.authenticateAnyUser(jwt('unknown'))).toBeUndefined();
    for (const odd of ['two words', 'quote"d', 'a=b', 'x'.repeat(16_385), 'tab\t'])
      expect(await authenticator.authenticateAnyUser(odd)).toBeUndefined();
    expect(await authenticator.authenticateAnyUser('x'.repeat(16_384))).toBeUndefined();
    expect(calls).toEqual([jwt('unknown'), 'x'.repeat(16_384)]);
  });

  it('shares the cache with authenticate: one review per token', async () => {
    const { authenticator, calls } = anyUserSetup({
      [jwt('p')]: { username: 'system:serviceaccount:agents:planner' },
    });
    expect((await authenticator.authenticate(jwt('p')))?.name).toBe('serviceaccount:agents/planner');
    expect((await authenticator.authenticateAnyUser(jwt('p')))?.kubernetes?.groups).toEqual([]);
    expect(calls).toHaveLength(1);
  });
});
