import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runArbiter } from '../cli/support/cli-run.js';
import { checkpointedUpTo } from '../support/audit-checkpoints.js';
import { call, KEYS, useArbiter } from '../support/arbiter-process.js';

const arbiter = useArbiter({ args: ['--checkpoint-entries', '5'] });

async function propose(query: string): Promise<string> {
  const response = await call(arbiter.url, 'POST', '/api/v1/governance/propose', {
    key: KEYS.agent,
    body: {
      actor: { id: 'agent-001', type: 'ai-agent' },
      action: { capability: 'database.query', parameters: { query } },
    },
  });
  expect(response.status).toBe(200);
  return (response.body as { decision_id: string }).decision_id;
}

describe('POST /api/v1/audit/archive', () => {
  it('is for admins only, and says what a request lacks', async () => {
    const denied = await call(arbiter.url, 'POST', '/api/v1/audit/archive', {
      key: KEYS.auditor,
      body: { before: new Date().toISOString() },
    });
    expect(denied.status).toBe(403);
    for (const body of [{}, { before: 'last tuesday' }, { before: new Date().toISOString(), to: 'x' }]) {
      const bad = await call(arbiter.url, 'POST', '/api/v1/audit/archive', { key: KEYS.admin, body });
      expect(bad.status, JSON.stringify(body)).toBe(400);
      expect(bad.body).toMatchObject({ error: { code: 'INVALID_REQUEST' } });
    }
  });

  it('archives the oldest entries, and the API says which range it holds from then on', async () => {
    const early = [];
    for (let i = 0; i < 12; i += 1) early.push(await propose(`early ${i}`));
    await checkpointedUpTo(arbiter.url, 10);
    const before = new Date().toISOString();

    const archived = await call(arbiter.url, 'POST', '/api/v1/audit/archive', {
      key: KEYS.admin,
      body: { before },
    });
    expect(archived.status).toBe(200);
    const result = archived.body as {
      archive: { file: string; from_seq: number; to_seq: number; entries: number };
      retained: { from_seq: number; anchor: { seq: number; archive: string; checkpoint_time: string } };
    };
    expect(result.archive).toMatchObject({ from_seq: 1 });
    const to = result.archive.to_seq;
    expect(to).toBeGreaterThanOrEqual(10);
    expect(result.retained).toMatchObject({
      from_seq: to + 1,
      anchor: { seq: to, archive: result.archive.file },
    });
    expect(await readdir(join(arbiter.dataDir, 'archives'))).toEqual([result.archive.file]);

    // The log answers with what it retains, and says so.
    const log = await call(arbiter.url, 'GET', '/api/v1/audit/log?limit=100', { key: KEYS.auditor });
    const page = log.body as {
      entries: { seq: number; event_type: string }[];
      retained: unknown;
      partial: boolean;
    };
    expect(page.entries[0]!.seq).toBe(to + 1);
    expect(page.retained).toEqual(result.retained);
    expect(page.partial).toBe(true);
    expect(page.entries.at(-1)).toMatchObject({ event_type: 'audit.archived' });
    const recent = await call(arbiter.url, 'GET', `/api/v1/audit/log?since=${encodeURIComponent(before)}`, {
      key: KEYS.auditor,
    });
    expect((recent.body as { partial: boolean }).partial).toBe(false);

    // An archived decision is not found here, and the answer says where it went.
    const gone = await call(arbiter.url, 'GET', `/api/v1/audit/log/${early[0]}`, { key: KEYS.auditor });
    expect(gone.status).toBe(404);
    expect((gone.body as { error: { message: string } }).error.message).toContain(
      `entries up to seq ${to} are archived, the newest in ${result.archive.file}`,
    );

    // New decisions go on; the retained chain verifies from the anchor.
    const late = await propose('late');
    const trail = await call(arbiter.url, 'GET', `/api/v1/audit/log/${late}`, { key: KEYS.auditor });
    expect(trail.body).toMatchObject({ integrity: { chain_verified: true } });
    const verify = await call(arbiter.url, 'GET', '/api/v1/audit/verify', { key: KEYS.auditor });
    expect(verify.body).toMatchObject({ ok: true, retained: result.retained });

    // Offline, the archive and an export of what is retained are one chain from genesis.
    const exported = await fetch(`${arbiter.url}/api/v1/audit/export`, {
      headers: { authorization: `Bearer ${KEYS.auditor}` },
    });
    expect(exported.headers.get('arbiter-retained-from-seq')).toBe(String(to + 1));
    const events = await call(arbiter.url, 'GET', '/api/v1/audit/events', { key: KEYS.auditor });
    expect(events.body).toMatchObject({ retained: result.retained });
    const exportFile = join(arbiter.dataDir, 'retained.jsonl');
    await writeFile(exportFile, await exported.text());
    const offline = await runArbiter([
      'audit',
      'verify',
      join(arbiter.dataDir, 'archives', result.archive.file),
      exportFile,
    ]);
    expect(offline.stderr).toMatch(/^verified: \d+ entries/);
    expect(JSON.parse(offline.stdout)).toMatchObject({ ok: true, start: { trusted: 'genesis' } });

    // Nothing new to archive before the archived checkpoint's own time. (Not `before`: a
    // checkpoint stamped just before it may become readable only after the first run.)
    const again = await call(arbiter.url, 'POST', '/api/v1/audit/archive', {
      key: KEYS.admin,
      body: { before: result.retained.anchor.checkpoint_time },
    });
    expect(again.body).toMatchObject({ archive: null, message: expect.stringMatching(/nothing to archive/) });
  });
});
