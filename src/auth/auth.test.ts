import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { ArbiterError } from '../model/index.js';
import { ApiKeyRegistry, sha256Hex } from './api-keys.js';
import { mayManageNamespace } from './namespace-access.js';
import { hasScope, mayActAs } from './scopes.js';

// Registries are built inside the tests: a keys file that fails to load then fails a test,
// not the whole file before any test has run.
const adminAndAgent = () =>
  ApiKeyRegistry.fromDocument({
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

const failureOf = (load: () => unknown): ArbiterError => {
  try {
    load();
  } catch (err) {
    expect(err).toBeInstanceOf(ArbiterError);
    return err as ArbiterError;
  }
  throw new Error('expected the keys file to be refused');
};

describe('API keys', () => {
  it('authenticates plaintext and hashed keys, nothing else', () => {
    const registry = adminAndAgent();
    expect(registry.authenticate('plaintext-key')?.name).toBe('admin');
    expect(registry.authenticate('agent-secret')?.name).toBe('agent');
    expect(registry.authenticate('wrong')).toBeUndefined();
    expect(registry.authenticate(sha256Hex('agent-secret'))).toBeUndefined();
    expect(registry.size).toBe(2);
  });

  it('takes a digest in upper-case hex', () => {
    const registry = ApiKeyRegistry.fromDocument({
      keys: [{ name: 'ci', sha256: sha256Hex('ci-secret').toUpperCase(), scopes: ['audit:read'] }],
    });
    expect(registry.authenticate('ci-secret')?.name).toBe('ci');
  });

  it('admin implies every scope; actor binding limits proposals', () => {
    const registry = adminAndAgent();
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
      /^API keys: duplicate key name x$/,
    ],
    [{ nokeys: [] }, /keys/],
  ])('rejects a bad keys file %#', (document, message) => {
    expect(() => ApiKeyRegistry.fromDocument(document)).toThrow(message);
  });

  it('names every problem of a bad keys file and where it is, the document itself as /', () => {
    const twoBadKeys = failureOf(() =>
      ApiKeyRegistry.fromDocument({
        keys: [
          { name: 'a', key: 'short', scopes: ['admin'] },
          { name: 'b', key: 'longenough', scopes: [] },
        ],
      }),
    );
    expect(twoBadKeys.code).toBe('INVALID_REQUEST');
    expect(twoBadKeys.message).toMatch(/^API keys: \/keys\/0\/key must [^;]+; \/keys\/1\/scopes must [^;]+$/);
    expect(failureOf(() => ApiKeyRegistry.fromDocument({ keys: 'none' })).message).toMatch(
      /^API keys: \/keys must be array$/,
    );
    expect(failureOf(() => ApiKeyRegistry.fromDocument({})).message).toBe(
      "API keys: / must have required property 'keys'",
    );
  });

  it('refuses one key under two names, also when one gives it as plaintext and one as digest', () => {
    const duplicate = failureOf(() =>
      ApiKeyRegistry.fromDocument({
        keys: [
          { name: 'a', key: 'shared-secret', scopes: ['admin'] },
          { name: 'b', sha256: sha256Hex('shared-secret').toUpperCase(), scopes: ['audit:read'] },
        ],
      }),
    );
    expect(duplicate.message).toBe('API keys: key b is a duplicate');
  });
});

describe('API keys limited to namespaces (issue #38)', () => {
  it('reads namespaces: [..] of keys and ServiceAccounts; such a key manages and acts only in them', () => {
    const registry = ApiKeyRegistry.fromDocument({
      keys: [
        { name: 'team-a-ci', key: 'team-a-secret', scopes: ['policies:manage'], namespaces: ['team-a'] },
      ],
      serviceAccounts: [
        { namespace: 'team-b', name: 'ci', scopes: ['governance:read'], namespaces: ['team-b'] },
      ],
    });
    const key = registry.authenticate('team-a-secret')!;
    expect(key.namespaces).toEqual(new Set(['team-a']));
    expect(registry.serviceAccounts.get('team-b/ci')!.namespaces).toEqual(new Set(['team-b']));
    expect([
      mayManageNamespace(key, 'team-a'),
      mayManageNamespace(key, 'team-b'),
      mayManageNamespace(key, undefined),
    ]).toEqual([true, false, false]);
    expect([mayActAs(key, 'team-a/bot'), mayActAs(key, 'team-b/bot'), mayActAs(key, 'agent-1')]).toEqual([
      true,
      false,
      false,
    ]);
    // Without namespaces, a key reaches everything, as before.
    const admin = adminAndAgent().authenticate('plaintext-key')!;
    expect([mayManageNamespace(admin, undefined), mayActAs(admin, 'team-a/bot')]).toEqual([true, true]);
  });

  it('refuses a namespace that is not a namespace name, and an empty list', () => {
    const bad = failureOf(() =>
      ApiKeyRegistry.fromDocument({
        keys: [{ name: 'x', key: 'some-secret', scopes: ['admin'], namespaces: ['Team_A'] }],
      }),
    );
    expect(bad.message).toContain('/keys/0/namespaces/0 must match pattern');
    const empty = failureOf(() =>
      ApiKeyRegistry.fromDocument({
        keys: [{ name: 'x', key: 'some-secret', scopes: ['admin'], namespaces: [] }],
      }),
    );
    expect(empty.message).toContain('/keys/0/namespaces must NOT have fewer than 1 items');
  });
});

describe('API keys file', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'arbiter-api-keys-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('loads the YAML file', async () => {
    const path = join(dir, 'good.yaml');
    await writeFile(path, stringify({ keys: [{ name: 'admin', key: 'dev-admin-key', scopes: ['admin'] }] }));
    const registry = await ApiKeyRegistry.load(path);
    expect(registry.authenticate('dev-admin-key')?.name).toBe('admin');
  });

  it("names the file in a bad file's problems", async () => {
    const path = join(dir, 'bad.yaml');
    await writeFile(path, stringify({ keys: [{ name: 'admin', key: 'short', scopes: ['admin'] }] }));
    await expect(ApiKeyRegistry.load(path)).rejects.toThrow(
      `${path}: /keys/0/key must NOT have fewer than 8 characters`,
    );
  });

  it('names a file it cannot read, with the reason as cause', async () => {
    const path = join(dir, 'missing.yaml');
    const err = (await ApiKeyRegistry.load(path).catch((e: unknown) => e)) as ArbiterError;
    expect(err).toBeInstanceOf(ArbiterError);
    expect(err.code).toBe('INVALID_REQUEST');
    expect(err.message).toBe(`cannot read API keys file ${path}`);
    expect(err.cause).toMatchObject({ code: 'ENOENT' });
  });
});
