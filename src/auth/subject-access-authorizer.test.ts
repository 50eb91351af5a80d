import { describe, expect, it } from 'vitest';
import type { ResourceAttributes } from './rbac-access.js';
import type { KubernetesUser } from './scopes.js';
import { SubjectAccessAuthorizer } from './subject-access-authorizer.js';

const approve = (name?: string): ResourceAttributes => ({
  group: 'governance.arbiter.dev',
  resource: 'decisions',
  verb: 'approve',
  ...(name === undefined ? {} : { name }),
});
const ALICE: KubernetesUser = { username: 'alice', groups: ['reviewers', 'system:authenticated'] };

/** A fake API server: allows what `allowed` holds (user|verb|name), records every question. */
function setup(allowed: string[] = []) {
  const clock = { ms: 0 };
  const asked: Array<{ user: KubernetesUser; attributes: ResourceAttributes }> = [];
  let failure: Error | undefined;
  const authorizer = new SubjectAccessAuthorizer(
    (user, attributes) => {
      asked.push({ user, attributes });
      if (failure) return Promise.reject(failure);
      return Promise.resolve(
        allowed.includes(`${user.username}|${attributes.verb}|${attributes.name ?? ''}`),
      );
    },
    {},
    () => clock.ms,
  );
  return { authorizer, asked, clock, fail: (err: Error | undefined) => (failure = err) };
}

describe('SubjectAccessAuthorizer', () => {
  it("gives RBAC's answer for the user, its groups and the request, as asked", async () => {
    const { authorizer, asked } = setup(['alice|approve|deploy.production']);
    expect(await authorizer.allows(ALICE, approve('deploy.production'))).toBe(true);
    expect(await authorizer.allows(ALICE, approve('payments.transfer'))).toBe(false);
    expect(asked[0]).toEqual({ user: ALICE, attributes: approve('deploy.production') });
  });

  it('asks once per user, groups, verb, resource and name; group order does not matter', async () => {
    const { authorizer, asked } = setup(['alice|approve|x']);
    const questions: Array<[KubernetesUser, ResourceAttributes]> = [
      [ALICE, approve('x')],
      [{ username: 'alice', groups: ['system:authenticated', 'reviewers'] }, approve('x')],
      [{ username: 'alice', groups: ['reviewers'] }, approve('x')],
      [{ username: 'bob', groups: ALICE.groups }, approve('x')],
      [ALICE, approve('y')],
      [ALICE, approve()],
      [ALICE, { ...approve('x'), verb: 'deny' }],
      [ALICE, { ...approve('x'), resource: 'auditlog' }],
      [ALICE, { ...approve('x'), group: 'other.example.com' }],
    ];
    for (const [user, attributes] of questions) await authorizer.allows(user, attributes);
    expect(asked).toHaveLength(questions.length - 1);
    expect(authorizer.cachedCount).toBe(questions.length - 1);
  });

  it('trusts an allow for 10 s and a refusal for 5 s', async () => {
    const { authorizer, asked, clock } = setup(['alice|approve|x']);
    await authorizer.allows(ALICE, approve('x'));
    await authorizer.allows(ALICE, approve('y'));
    clock.ms = 4_999;
    await authorizer.allows(ALICE, approve('x'));
    await authorizer.allows(ALICE, approve('y'));
    expect(asked).toHaveLength(2);
    clock.ms = 5_000;
    await authorizer.allows(ALICE, approve('y'));
    clock.ms = 9_999;
    await authorizer.allows(ALICE, approve('x'));
    expect(asked).toHaveLength(3);
    clock.ms = 10_000;
    await authorizer.allows(ALICE, approve('x'));
    expect(asked).toHaveLength(4);
  });

  it('fails closed with UNAVAILABLE when the API server cannot answer', async () => {
    const { authorizer, fail } = setup(['alice|approve|x']);
    const refused = new Error('connect ECONNREFUSED 127.0.0.1:6443');
    fail(refused);
    await expect(authorizer.allows(ALICE, approve('x'))).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      message: "cannot check the caller's permissions: SubjectAccessReview failed",
      cause: refused,
    });
    expect(authorizer.cachedCount).toBe(0);
    fail(undefined);
    expect(await authorizer.allows(ALICE, approve('x'))).toBe(true);
  });

  it('answers UNAVAILABLE when the API server is too slow, or too many reviews are under way', async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const authorizer = new SubjectAccessAuthorizer(
      async () => {
        await held;
        return true;
      },
      { reviewTimeoutMs: 20, maxInFlight: 1 },
    );
    const slow = authorizer.allows(ALICE, approve('x'));
    await expect(authorizer.allows(ALICE, approve('y'))).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      message: 'too many SubjectAccessReviews under way; retry',
    });
    await expect(slow).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      message: "cannot check the caller's permissions: SubjectAccessReview took more than 20 ms",
    });
    release();
  });
});
