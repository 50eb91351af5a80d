import { describe, expect, it } from 'vitest';
import { call, KEYS, useArbiter } from '../support/arbiter-process.js';

describe('GET /api/v1/auth/whoami and /api/v1/audit/checkpoints', () => {
  const arbiter = useArbiter({ args: ['--checkpoint-entries', '2'] });

  it('names the caller of each example key with its scopes and actors', async () => {
    const reviewer = await call(arbiter.url, 'GET', '/api/v1/auth/whoami', { key: KEYS.reviewer });
    expect(reviewer.status).toBe(200);
    expect(reviewer.body).toEqual({
      principal: 'reviewer',
      scopes: ['governance:read', 'governance:review'],
      actors: null,
      namespaces: null,
      kubernetes: null,
    });
    const agent = await call(arbiter.url, 'GET', '/api/v1/auth/whoami', { key: KEYS.agent });
    expect(agent.body).toMatchObject({ principal: 'agent-001', actors: ['agent-001'] });
    const admin = await call(arbiter.url, 'GET', '/api/v1/auth/whoami', { key: KEYS.admin });
    expect(admin.body.scopes).toEqual(['admin']);
  });

  it('answers 401 UNAUTHENTICATED without a valid credential', async () => {
    for (const key of [undefined, 'not-a-key']) {
      const answer = await call(arbiter.url, 'GET', '/api/v1/auth/whoami', key ? { key } : {});
      expect(answer.status).toBe(401);
      expect(answer.body.error.code).toBe('UNAUTHENTICATED');
      expect(answer.headers.get('www-authenticate')).toContain('Bearer');
    }
  });

  it('lists the checkpoints newest first, to audit:read only', async () => {
    const list = () => call(arbiter.url, 'GET', '/api/v1/audit/checkpoints', { key: KEYS.auditor });
    // The start's configuration events are checkpointed in the background: wait for the first.
    await expect.poll(async () => (await list()).body.checkpoints?.length ?? 0).toBeGreaterThan(0);
    const answer = await list();
    expect(answer.status).toBe(200);
    const seqs = answer.body.checkpoints.map((c: { seq: number }) => c.seq);
    expect(seqs.length).toBeGreaterThan(0);
    expect(seqs).toEqual([...seqs].sort((a: number, b: number) => b - a));
    expect(answer.body.checkpoints[0]).toMatchObject({ note: null, hash: expect.stringMatching(/^sha256:/) });
    const refused = await call(arbiter.url, 'GET', '/api/v1/audit/checkpoints', { key: KEYS.reviewer });
    expect([refused.status, refused.body.error.code]).toEqual([403, 'FORBIDDEN']);
  });

  it('documents both in the OpenAPI document the server serves', async () => {
    const doc = await call(arbiter.url, 'GET', '/api/v1/openapi.json');
    const whoami = doc.body.paths['/api/v1/auth/whoami'].get;
    expect(whoami.security).toEqual([{ bearer: [] }]);
    expect(whoami.responses['200'].content['application/json'].schema.required).toEqual([
      'principal',
      'scopes',
      'actors',
      'namespaces',
      'kubernetes',
    ]);
    expect(doc.body.paths['/api/v1/audit/checkpoints'].get.description).toContain('audit:read');
  });
});
