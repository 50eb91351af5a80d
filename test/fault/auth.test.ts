import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES, type Scope } from '../../src/auth/index.js';
import {
  call,
  KEYS,
  removeDir,
  startArbiter,
  tempDir,
  type ArbiterProcess,
} from '../support/arbiter-process.js';
import { ENDPOINTS, PROPOSAL, type Endpoint } from './endpoints.js';

/** One key per single scope (admin excluded), and agent keys bound to one actor each. */
const SINGLE_SCOPE = SCOPES.filter((s) => s !== 'admin');
const keyOf = (scope: Scope) => `only-${scope.replace(':', '-')}-key`;
const BOUND = { key: 'bound-agent-002-key', actor: 'agent-002' };

function keysFile(): string {
  const lines = ['keys:', '  - {name: admin, key: dev-admin-key, scopes: [admin]}'];
  for (const scope of SINGLE_SCOPE)
    lines.push(`  - {name: only-${scope}, key: ${keyOf(scope)}, scopes: [${scope}]}`);
  lines.push(
    `  - {name: bound, key: ${BOUND.key}, scopes: [governance:propose, governance:read], actors: [${BOUND.actor}]}`,
  );
  return `${lines.join('\n')}\n`;
}

/** Hostile credentials: not keys, near misses of real keys, malformed headers. */
const BAD_AUTHORIZATION = [
  'Bearer not-a-key',
  'Bearer dev-admin-ke',
  'Bearer dev-admin-key2',
  'Bearer DEV-ADMIN-KEY',
  'Basic ZGV2LWFkbWluLWtleTo=',
  'Bearer',
  'Bearer dev-admin-key extra',
  'dev-admin-key',
  `Bearer ${'x'.repeat(4096)}`,
  'Bearer 768d431c7599a91b58ae5747e08e9aa96dcb4eef45e029c87e3e060e521dcead',
];

describe('fault: auth on every endpoint', () => {
  let arbiter: ArbiterProcess;
  let keysDir: string;
  /** Decision of agent-001 and of agent-002, made by the admin. */
  const decisions: Record<string, string> = {};
  const pathOf = (e: Endpoint, actor = 'agent-001') => e.path.replace('{decision}', decisions[actor]!);
  const send = (e: Endpoint, headers: Record<string, string>, actor?: string) =>
    call(arbiter.url, e.method, pathOf(e, actor), {
      headers,
      ...(e.body === undefined ? {} : { body: e.body }),
    });
  const expectNoData = (res: { status: number; body: any }, what: string) => {
    expect(Object.keys(res.body ?? {}), what).toEqual(['error']);
    const text = JSON.stringify(res.body);
    for (const id of Object.values(decisions)) expect(text, what).not.toContain(id);
  };
  let stateBefore = '';
  const state = async () => {
    const admin = { key: KEYS.admin };
    const parts = await Promise.all(
      [
        '/api/v1/capabilities?limit=200',
        '/api/v1/policies?limit=200',
        '/api/v1/actors/agent-001/grants',
        '/api/v1/actors/agent-9/grants',
        '/api/v1/audit/log?limit=200',
      ].map((p) => call(arbiter.url, 'GET', p, admin)),
    );
    return JSON.stringify(parts.map((p) => p.body));
  };

  beforeAll(async () => {
    keysDir = await tempDir('arbiter-keys-');
    const apiKeys = join(keysDir, 'keys.yaml');
    await writeFile(apiKeys, keysFile());
    arbiter = await startArbiter({ apiKeys, args: ['--key-rate-limit', '100000', '--key-burst', '100000'] });
    for (const actor of ['agent-001', 'agent-002']) {
      const res = await call(arbiter.url, 'POST', '/api/v1/governance/propose', {
        key: KEYS.admin,
        body: {
          actor: { id: actor, type: 'ai-agent' },
          action: { capability: 'deploy.production', parameters: { service: 'web', version: '1' } },
        },
      });
      expect(res.status).toBe(200);
      decisions[actor] = res.body.decision_id;
    }
    stateBefore = await state();
  });
  afterAll(async () => {
    if (arbiter?.child) {
      await arbiter.stop();
      await removeDir(arbiter.dataDir);
      await removeDir(arbiter.manifestsDir);
    }
    if (keysDir) await removeDir(keysDir);
  });

  it('answers 401 without a key and with every bad key, never with data', async () => {
    for (const e of ENDPOINTS) {
      const none = await send(e, {});
      expect(none.status, `${e.method} ${e.path} without a key`).toBe(401);
      expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expectNoData(none, e.path);
      for (const authorization of BAD_AUTHORIZATION) {
        const bad = await send(e, { authorization });
        expect(bad.status, `${e.method} ${e.path} with ${authorization.slice(0, 40)}`).toBe(401);
        expectNoData(bad, e.path);
      }
    }
  });

  it('answers 403 to every key that lacks the scope, never with data', async () => {
    let checked = 0;
    for (const e of ENDPOINTS) {
      for (const scope of SINGLE_SCOPE.filter((s) => s !== e.scope)) {
        const res = await send(e, { authorization: `Bearer ${keyOf(scope)}` });
        expect(res.status, `${e.method} ${e.path} with only ${scope}`).toBe(403);
        expect(res.body.error.code).toBe('FORBIDDEN');
        expectNoData(res, e.path);
        checked += 1;
      }
    }
    expect(checked).toBe(ENDPOINTS.length * (SINGLE_SCOPE.length - 1));
  });

  it('answers 403 to a key bound to another actor wherever the actor matters', async () => {
    const auth = { authorization: `Bearer ${BOUND.key}` };
    const propose = await call(arbiter.url, 'POST', '/api/v1/governance/propose', {
      headers: auth,
      body: PROPOSAL,
    });
    expect(propose.status).toBe(403);
    expect(propose.body.error.code).toBe('ACTOR_MISMATCH');
    expectNoData(propose, 'propose');
    const execution = await call(
      arbiter.url,
      'POST',
      `/api/v1/governance/decisions/${decisions['agent-001']}/execution`,
      { headers: auth, body: { status: 'completed' } },
    );
    expect(execution.status).toBe(403);
    expect(execution.body.error.code).toBe('ACTOR_MISMATCH');
    expectNoData(execution, 'execution');
    // Its own actor works: the refusals above were about the actor, not the key.
    const own = await call(arbiter.url, 'POST', '/api/v1/governance/propose', {
      headers: auth,
      body: { ...PROPOSAL, actor: { id: BOUND.actor, type: 'ai-agent' } },
    });
    expect(own.status).toBe(200);
    stateBefore = await state();
  });

  it('changed nothing while refusing: configuration and audit log as before', async () => {
    // Every refused write again, then compare what an admin sees.
    for (const e of ENDPOINTS.filter((x) => x.method !== 'GET')) {
      await send(e, { authorization: 'Bearer not-a-key' });
      await send(e, {
        authorization: `Bearer ${keyOf(e.scope === 'audit:read' ? 'governance:read' : 'audit:read')}`,
      });
    }
    expect(await state()).toBe(stateBefore);
  });
});
