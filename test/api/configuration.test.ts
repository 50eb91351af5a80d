import { describe, expect, it } from 'vitest';
import { call, KEYS, useArbiter } from '../support/arbiter-process.js';

const arbiter = useArbiter();
const api = (method: string, path: string, body?: unknown, key: string = KEYS.admin) =>
  call(arbiter.url, method, `/api/v1${path}`, { key, ...(body === undefined ? {} : { body }) });
const proposeAs = (actor: string, capability: string, parameters: Record<string, unknown>) =>
  api('POST', '/governance/propose', {
    actor: { id: actor, type: 'automation' },
    action: { capability, parameters },
  });

const lastEntry = async (eventType: string) =>
  (await api('GET', `/audit/log?event_type=${eventType}&order=desc&limit=1`)).body.entries[0];

describe('capabilities', () => {
  it('lists the registered capabilities with the envelope and pages by cursor', async () => {
    const all = await api('GET', '/capabilities');
    expect(all.status).toBe(200);
    expect(all.body.total).toBe(5);
    expect(all.body.cursor).toBeNull();
    expect(all.body.capabilities[0]).toMatchObject({
      id: expect.any(String),
      name: 'database.query',
      risk_level: 'low',
      parameter_schema: expect.any(Object),
    });
    const names: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { body: { capabilities: Array<{ name: string }>; cursor: string | null } } = await api(
        'GET',
        `/capabilities?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
      );
      names.push(...page.body.capabilities.map((c) => c.name));
      cursor = page.body.cursor;
    } while (cursor);
    expect(names).toEqual(all.body.capabilities.map((c: { name: string }) => c.name));
  });

  it('rejects bad limits and cursors with 400', async () => {
    for (const query of [
      'limit=0',
      'limit=201',
      'limit=abc',
      'limit=-1',
      'cursor=%%%',
      'cursor=bm90LWpzb24',
      'limit=1&limit=2',
      'unknown=1',
    ]) {
      const res = await api('GET', `/capabilities?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.error.code).toBe('INVALID_REQUEST');
    }
  });

  it('registers a capability (201, audited), refuses a duplicate (409) and bad bodies (400)', async () => {
    const body = {
      name: 'files.read_secret',
      description: 'Read a secret file',
      risk_level: 'high',
      parameter_schema: { type: 'object', required: ['path'], properties: { path: { type: 'string' } } },
    };
    const created = await api('POST', '/capabilities', body);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      name: 'files.read_secret',
      risk_level: 'high',
      status: { ready: true },
    });
    const again = await api('POST', '/capabilities', body);
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('CONFLICT');
    for (const bad of [
      { ...body, name: 'nodot' },
      { ...body, risk_level: 'extreme' },
      { description: 'x' },
      { ...body, parameter_schema: 'x' },
      { ...body, parameter_schema: { type: 'nonsense' }, name: 'files.bad' },
    ]) {
      const res = await api('POST', '/capabilities', bad);
      expect(res.status, JSON.stringify(bad)).toBe(400);
    }
    const forbidden = await api('POST', '/capabilities', { ...body, name: 'files.other' }, KEYS.agent);
    expect(forbidden.status).toBe(403);
    const log = await api('GET', '/audit/log?event_type=capability.registered&capability=files.read_secret');
    expect(log.body.total).toBe(1);
    expect(log.body.entries[0].actor_id).toBe('admin');
  });
});

describe('policies', () => {
  it('creates a policy that changes decisions at once, and lists it', async () => {
    await api('POST', '/actors/bot-7/grants', { capability: 'email.send' });
    const before = await proposeAs('bot-7', 'email.send', { to: 'ceo@example.com', subject: 'hi' });
    // No rule covers mail to an @example.com address: the grant allows it.
    expect(before.body.outcome).toBe('ALLOW');
    const created = await api('POST', '/policies', {
      name: 'no-mail-to-ceo',
      description: 'The CEO gets no bot mail',
      enabled: true,
      rules: [
        {
          capability: 'email.send',
          condition: "parameters.to == 'ceo@example.com'",
          outcome: 'ESCALATE',
          priority: 10,
        },
      ],
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      id: 'no-mail-to-ceo',
      name: 'no-mail-to-ceo',
      enabled: true,
      status: { ready: true },
    });
    const after = await proposeAs('bot-7', 'email.send', { to: 'ceo@example.com', subject: 'hi' });
    expect(after.body.outcome).toBe('ESCALATE');
    expect(after.body.reason).toContain('no-mail-to-ceo');
    const others = await proposeAs('bot-7', 'email.send', { to: 'cfo@example.com', subject: 'hi' });
    expect(others.body.outcome).toBe('ALLOW');
    const listed = await api('GET', '/policies');
    expect(listed.body.policies.map((p: { name: string }) => p.name)).toContain('no-mail-to-ceo');
    expect(listed.body.total).toBe(listed.body.policies.length);
    const duplicate = await api('POST', '/policies', { name: 'no-mail-to-ceo', rules: [] });
    expect(duplicate.status).toBe(409);
  });

  it('updates a policy (PUT) with immediate effect and a policy.updated entry', async () => {
    await api('POST', '/actors/bot-8/grants', { capability: 'database.query' });
    await api('POST', '/policies', {
      name: 'query-guard',
      rules: [
        {
          capability: 'database.query',
          condition: "parameters.query == 'drop'",
          outcome: 'DENY',
          priority: 1,
        },
      ],
    });
    expect((await proposeAs('bot-8', 'database.query', { query: 'select' })).body.outcome).toBe('ALLOW');
    const updated = await api('PUT', '/policies/query-guard', {
      rules: [{ capability: 'database.query', outcome: 'DENY', priority: 1 }],
    });
    expect(updated.status).toBe(200);
    expect((await proposeAs('bot-8', 'database.query', { query: 'select' })).body.outcome).toBe('DENY');
    const disabled = await api('PUT', '/policies/query-guard', {
      enabled: false,
      rules: [{ capability: 'database.query', outcome: 'DENY', priority: 1 }],
    });
    expect(disabled.body.enabled).toBe(false);
    expect((await proposeAs('bot-8', 'database.query', { query: 'select' })).body.outcome).toBe('ALLOW');
    const log = await api('GET', '/audit/log?event_type=policy.updated');
    expect(
      log.body.entries.filter((e: { data: { name: string } }) => e.data.name === 'query-guard'),
    ).toHaveLength(2);
  });

  it('refuses a condition that does not compile, naming the rule', async () => {
    const res = await api('POST', '/policies', {
      name: 'broken',
      rules: [{ capability: 'database.query', condition: 'parameters.x ==', outcome: 'DENY' }],
    });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/rule/i);
    expect((await api('GET', '/policies/broken')).status).toBe(404);
  });

  it("refuses a condition that does not type-check against the capability's parameter schema", async () => {
    // database.query's schema (examples/manifests) says query is a string.
    const asBool = await api('POST', '/policies', {
      name: 'query-as-bool',
      rules: [{ capability: 'database.query', condition: 'parameters.query', outcome: 'DENY' }],
    });
    expect(asBool.status).toBe(400);
    expect(asBool.body.error).toMatchObject({
      code: 'INVALID_REQUEST',
      message:
        'policy query-as-bool, rule 0 (capability database.query): the condition does not compile: ' +
        'a condition must be a bool, but this one is a value of type string',
    });
    const mixed = await api('POST', '/policies', {
      name: 'mixed',
      rules: [{ capability: 'database.query', condition: '1 + "a" == 2', outcome: 'DENY' }],
    });
    expect(mixed.status).toBe(400);
    expect(mixed.body.error.message).toContain("found no matching overload for '+' applied to (int, string)");
    expect((await api('GET', '/policies/query-as-bool')).status).toBe(404);
    // PUT goes through the same check, and the policy in force stays as it was.
    await api('POST', '/policies', {
      name: 'typed-guard',
      rules: [
        { capability: 'database.query', condition: "parameters.query.startsWith('drop')", outcome: 'DENY' },
      ],
    });
    const put = await api('PUT', '/policies/typed-guard', {
      rules: [{ capability: 'database.query', condition: 'parameters.query > 5', outcome: 'DENY' }],
    });
    expect(put.status).toBe(400);
    expect(put.body.error.message).toContain("found no matching overload for '>' applied to (string, int)");
    expect((await api('GET', '/policies/typed-guard')).body.rules[0].condition).toBe(
      "parameters.query.startsWith('drop')",
    );
    // A capability not registered yet: parameters are not typed, and the policy waits with a warning.
    const early = await api('POST', '/policies', {
      name: 'early-typed',
      rules: [{ capability: 'later.query', condition: 'parameters.query', outcome: 'DENY' }],
    });
    expect(early.status).toBe(201);
    expect(early.body.status).toMatchObject({ ready: false, reason: 'UnknownCapability' });
    // Registering it with a schema under which that condition cannot work would take the policy out of use.
    const register = (type: string) =>
      api('POST', '/capabilities', {
        name: 'later.query',
        risk_level: 'low',
        parameter_schema: { type: 'object', properties: { query: { type } } },
      });
    const breaking = await register('string');
    expect(breaking.status).toBe(400);
    expect(breaking.body.error.message).toMatch(
      /^spec\.parameterSchema would take policy early-typed out of use \(policy early-typed, rule 0 .*a value of type string\); change the policy first$/,
    );
    expect((await register('boolean')).status).toBe(201);
    expect((await api('GET', '/policies/early-typed')).body.status).toMatchObject({ ready: true });
  });

  it('PUT: 404 for an unknown policy, 409 for a manifest-owned one, 400 for a name mismatch', async () => {
    expect((await api('PUT', '/policies/nope', { rules: [] })).status).toBe(404);
    const owned = await api('PUT', '/policies/prod-writes', { rules: [] });
    expect(owned.status).toBe(409);
    expect(owned.body.error.message).toMatch(/manifest/);
    expect((await api('PUT', '/policies/query-guard', { name: 'other', rules: [] })).status).toBe(400);
  });
});

describe('grants', () => {
  it('grants, lists and revokes, with decisions following each step', async () => {
    expect((await proposeAs('ops-bot', 'database.query', { query: 'q' })).body.outcome).toBe('DENY');
    const granted = await api('POST', '/actors/ops-bot/grants', {
      capability: 'database.query',
      constraints: { rate_limit: { max_requests: 2, window_seconds: 60 } },
    });
    expect(granted.status).toBe(201);
    expect(granted.body).toMatchObject({
      actor_id: 'ops-bot',
      capability: 'database.query',
      constraints: { rate_limit: { max_requests: 2, window_seconds: 60 } },
    });
    const list = await api('GET', '/actors/ops-bot/grants');
    expect(list.body).toMatchObject({
      total: 1,
      cursor: null,
      grants: [
        {
          capability: 'database.query',
          constraints: { rate_limit: { max_requests: 2, window_seconds: 60 } },
        },
      ],
    });
    const outcomes = [];
    for (let i = 0; i < 3; i += 1)
      outcomes.push((await proposeAs('ops-bot', 'database.query', { query: 'q' })).body.outcome);
    expect(outcomes).toEqual(['ALLOW', 'ALLOW', 'DENY']);
    const revoked = await api('DELETE', '/actors/ops-bot/grants/database.query');
    expect(revoked.status).toBe(200);
    expect((await proposeAs('ops-bot', 'database.query', { query: 'q' })).body.outcome).toBe('DENY');
    expect((await api('DELETE', '/actors/ops-bot/grants/database.query')).status).toBe(404);
    const log = await api('GET', '/audit/log?actor_id=ops-bot&order=asc');
    const types = log.body.entries.map((e: { event_type: string }) => e.event_type);
    expect(types).toContain('actor.grant.created');
    expect(types).toContain('actor.grant.revoked');
  });

  it('grants with a time window; rejects bad constraints; manifest grants cannot be revoked through the API', async () => {
    const ok = await api('POST', '/actors/night-bot/grants', {
      capability: 'email.send',
      constraints: { time_window: { start: '22:00', end: '06:00', timezone: 'Asia/Tokyo' } },
    });
    expect(ok.status).toBe(201);
    for (const bad of [
      {
        capability: 'email.send',
        constraints: { time_window: { start: '25:00', end: '06:00', timezone: 'UTC' } },
      },
      { capability: 'email.send', constraints: { rate_limit: { max_requests: 0, window_seconds: 1 } } },
      { capability: 'email.send', constraints: { rate_limit: { max_requests: '5', window_seconds: 1 } } },
      { capability: 'Email' },
      {},
    ]) {
      expect((await api('POST', '/actors/night-bot/grants', bad)).status, JSON.stringify(bad)).toBe(400);
    }
    const manifest = await api('DELETE', '/actors/agent-001/grants/database.query');
    expect(manifest.status).toBe(409);
  });
});

describe('DELETE /api/v1/policies/:id', () => {
  it('deletes an API policy with immediate effect and a policy.deleted entry naming the caller', async () => {
    await api('POST', '/actors/del-bot/grants', { capability: 'email.send' });
    const created = await api('POST', '/policies', {
      name: 'no-bot-mail',
      rules: [{ capability: 'email.send', outcome: 'DENY', priority: 5 }],
    });
    expect(created.status).toBe(201);
    const denied = await proposeAs('del-bot', 'email.send', { to: 'a@example.com', subject: 'hi' });
    expect(denied.body).toMatchObject({ outcome: 'DENY', reason: expect.stringContaining('no-bot-mail') });

    const deleted = await api('DELETE', '/policies/no-bot-mail');
    expect(deleted.status, JSON.stringify(deleted.body)).toBe(200);
    expect(deleted.body).toEqual({ id: 'no-bot-mail', deleted: true });
    expect((await api('GET', '/policies/no-bot-mail')).status).toBe(404);
    expect(
      (await proposeAs('del-bot', 'email.send', { to: 'a@example.com', subject: 'hi' })).body.outcome,
    ).toBe('ALLOW');
    expect(await lastEntry('policy.deleted')).toMatchObject({
      actor_id: 'admin',
      data: { kind: 'Policy', name: 'no-bot-mail', change: 'deleted', changed_by: 'admin', object: null },
    });
    expect((await api('DELETE', '/policies/no-bot-mail')).status).toBe(404);
  });

  it('refuses a manifest policy (409, naming the file), an unknown one (404) and a caller without policies:manage (403)', async () => {
    const owned = await api('DELETE', '/policies/prod-writes');
    expect(owned.status).toBe(409);
    expect(owned.body.error).toMatchObject({
      code: 'CONFLICT',
      message: expect.stringMatching(/policies\.yaml/),
    });
    const unknown = await api('DELETE', '/policies/never-was');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('NOT_FOUND');
    const forbidden = await api('DELETE', '/policies/prod-writes', undefined, KEYS.reviewer);
    expect(forbidden.status).toBe(403);
    expect((await api('GET', '/policies/prod-writes')).status).toBe(200);
  });
});

describe('DELETE /api/v1/capabilities/:name', () => {
  it('refuses while a grant or a policy rule needs the capability, naming them; deletes once none does', async () => {
    const registered = await api('POST', '/capabilities', { name: 'tickets.close', risk_level: 'low' });
    expect(registered.status).toBe(201);
    await api('POST', '/actors/helpdesk-bot/grants', { capability: 'tickets.close' });
    await api('POST', '/policies', {
      name: 'ticket-guard',
      rules: [
        { capability: 'email.send', outcome: 'ESCALATE', priority: 1, condition: "parameters.to == 'x'" },
        { capability: 'tickets.close', outcome: 'ESCALATE', priority: 1, condition: "parameters.id == 'x'" },
      ],
    });

    const inUse = await api('DELETE', '/capabilities/tickets.close');
    expect(inUse.status).toBe(409);
    expect(inUse.body.error.code).toBe('CONFLICT');
    expect(inUse.body.error.message).toContain('helpdesk-bot');
    expect(inUse.body.error.message).toContain('ticket-guard rule 1');
    expect(inUse.body.error.details).toEqual({
      grants: [{ actor_id: 'helpdesk-bot', object: expect.any(String) }],
      rules: [{ policy: 'ticket-guard', rule_index: 1 }],
    });
    expect((await proposeAs('helpdesk-bot', 'tickets.close', { id: 'y' })).body.outcome).toBe('ALLOW');

    await api('DELETE', '/actors/helpdesk-bot/grants/tickets.close');
    const stillRule = await api('DELETE', '/capabilities/tickets.close');
    expect(stillRule.status).toBe(409);
    expect(stillRule.body.error.message).not.toContain('helpdesk-bot');
    await api('PUT', '/policies/ticket-guard', {
      rules: [
        { capability: 'email.send', outcome: 'ESCALATE', priority: 1, condition: "parameters.to == 'x'" },
      ],
    });

    const deleted = await api('DELETE', '/capabilities/tickets.close');
    expect(deleted.status, JSON.stringify(deleted.body)).toBe(200);
    expect(deleted.body).toEqual({ name: 'tickets.close', deleted: true, objects: [registered.body.id] });
    const names = (await api('GET', '/capabilities')).body.capabilities.map((c: { name: string }) => c.name);
    expect(names).not.toContain('tickets.close');
    expect(await lastEntry('capability.deleted')).toMatchObject({
      actor_id: 'admin',
      capability: 'tickets.close',
      data: { kind: 'Capability', change: 'deleted', changed_by: 'admin', object: null },
    });
    const after = await proposeAs('helpdesk-bot', 'tickets.close', { id: 'y' });
    expect(after.body.outcome).toBe('DENY');
    expect((await api('DELETE', '/capabilities/tickets.close')).status).toBe(404);
  });

  it('refuses a manifest capability (409, naming the file) and a caller without capabilities:manage (403)', async () => {
    const owned = await api('DELETE', '/capabilities/database.query');
    expect(owned.status).toBe(409);
    expect(owned.body.error.message).toMatch(/capabilities\.yaml/);
    await api('POST', '/capabilities', { name: 'tickets.open', risk_level: 'low' });
    const forbidden = await api('DELETE', '/capabilities/tickets.open', undefined, KEYS.reviewer);
    expect(forbidden.status).toBe(403);
    const badName = await api('DELETE', '/capabilities/Not_A_Name');
    expect(badName.status).toBe(404);
  });
});

describe('a capability pinned to an MCP tool', () => {
  it('takes spec.mcp as mcp {server, tool, definition_digest}, answers and lists it, and refuses a bad pin', async () => {
    const mcp = { server: 'notes', tool: 'add_note', definition_digest: `sha256:${'ab'.repeat(32)}` };
    const created = await api('POST', '/capabilities', {
      name: 'mcp.notes.add_note',
      risk_level: 'medium',
      mcp,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.mcp).toEqual(mcp);
    const listed = await api('GET', '/capabilities?limit=200');
    expect(
      listed.body.capabilities.find((c: { name: string }) => c.name === 'mcp.notes.add_note').mcp,
    ).toEqual(mcp);
    expect(
      listed.body.capabilities.find((c: { name: string }) => c.name === 'database.query').mcp,
    ).toBeUndefined();
    const bad = await api('POST', '/capabilities', {
      name: 'mcp.notes.delete_note',
      risk_level: 'high',
      mcp: { ...mcp, definition_digest: 'md5:1' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('definition_digest');
  });
});
