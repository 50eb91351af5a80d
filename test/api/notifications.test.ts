import { createHmac } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startRedisServer } from '../env/redis-server.js';
import { Receiver } from '../support/webhook-receiver.js';
import {
  call,
  KEYS,
  startArbiter,
  tempDir,
  tempManifests,
  type ArbiterProcess,
} from '../support/arbiter-process.js';

const SECRET = 'notify-test-secret';
let arbiter: ArbiterProcess | undefined;
let receiver: Receiver | undefined;
afterEach(async () => {
  await arbiter?.stop();
  await receiver?.down();
  arbiter = undefined;
});

async function start(dirs: { dataDir: string; manifestsDir: string }, args: string[]) {
  arbiter = await startArbiter({ ...dirs, args: ['--pending-ttl', '4', ...args] });
  return arbiter;
}

const propose = (url: string, capability: string, parameters: Record<string, unknown>) =>
  call(url, 'POST', '/api/v1/governance/propose', {
    key: KEYS.agent,
    body: { actor: { id: 'agent-001', type: 'ai-agent' }, action: { capability, parameters } },
  }).then((r) => r.body.decision_id as string);
const review = (url: string, id: string, action: 'approve' | 'deny') =>
  call(url, 'POST', `/api/v1/governance/decisions/${id}/${action}`, { key: KEYS.reviewer, body: {} });

describe('notifications', () => {
  it('reach a receiver that was down, across a restart: every event once, signed, without parameters', async () => {
    receiver = await Receiver.onFreePort();
    const dirs = { dataDir: await tempDir(), manifestsDir: await tempManifests() };
    const secretFile = join(dirs.dataDir, 'notify.secret');
    await writeFile(secretFile, `${SECRET}\n`);
    const flags = ['--notify-url', receiver.url, '--notify-secret-file', secretFile];
    const first = await start(dirs, flags);

    // The receiver is down: decisions are made and answered all the same.
    const approved = await propose(first.url, 'deploy.production', { service: 'web', version: 's3cr3t-1' });
    const denied = await propose(first.url, 'deploy.production', { service: 'web', version: 's3cr3t-2' });
    const expiring = await propose(first.url, 'database.write', {
      database: 'production',
      statement: 'update secrets set x=1',
    });
    await propose(first.url, 'database.query', { query: 'select 1' }); // ALLOW: no notification
    expect((await review(first.url, approved, 'approve')).status).toBe(200);
    expect((await review(first.url, denied, 'deny')).status).toBe(200);
    await first.stop();

    // Restarted while the receiver is still down; the deadline of `expiring` passes meanwhile.
    const second = await start(dirs, flags);
    await expect
      .poll(
        async () => {
          const res = await call(second.url, 'GET', `/api/v1/governance/decisions/${expiring}`, {
            key: KEYS.reviewer,
          });
          return res.body.audit.reviews.map((r: { action: string }) => r.action);
        },
        { timeout: 20_000, interval: 250 },
      )
      .toEqual(['expire']);
    await receiver.up();

    const expected: Array<[string, string]> = [
      ['decision.pending', approved],
      ['decision.pending', denied],
      ['decision.pending', expiring],
      ['decision.approved', approved],
      ['decision.denied', denied],
      ['decision.expired', expiring],
    ];
    await expect
      .poll(() => receiver!.received.length, { timeout: 30_000, interval: 250 })
      .toBe(expected.length);
    for (const [type, id] of expected) expect(receiver.of(type, id), `${type} ${id}`).toHaveLength(1);

    for (const { headers, text, body } of receiver.received) {
      const mac = createHmac('sha256', SECRET).update(text).digest('hex');
      expect(headers['x-arbiter-signature']).toBe(`sha256=${mac}`);
      expect(headers['x-arbiter-event']).toBe(body.type);
      expect(Object.keys(body).sort()).toEqual(
        [
          'actor_id',
          'audit_ref',
          'capability',
          'decision_id',
          'expires_at',
          'outcome',
          'reason',
          'reviewer',
          'risk_score',
          'timestamp',
          'type',
        ].sort(),
      );
      expect(text).not.toMatch(/s3cr3t|update secrets/);
    }
    const [pending] = receiver.of('decision.pending', approved);
    expect(pending!.body).toMatchObject({
      outcome: 'ESCALATE',
      actor_id: 'agent-001',
      capability: 'deploy.production',
      reviewer: null,
      risk_score: expect.any(Number),
      expires_at: expect.any(String),
      audit_ref: expect.stringMatching(/^aud_/),
    });
    expect(receiver.of('decision.approved', approved)[0]!.body.reviewer).toBe('reviewer');
    expect(receiver.of('decision.expired', expiring)[0]!.body.reviewer).toBe('arbiter');

    const metrics = String((await call(second.url, 'GET', '/metrics')).body);
    expect(metrics).toMatch(/^arbiter_notifications_total\{type="decision.expired",result="delivered"\} 1$/m);
    expect(metrics).toMatch(
      /^arbiter_notifications_total\{type="decision.pending",result="retried"\} [1-9]/m,
    );

    // Nothing is told twice after another restart.
    await second.stop();
    const third = await start(dirs, flags);
    const later = await propose(third.url, 'deploy.production', { service: 'web', version: '4' });
    await expect.poll(() => receiver!.of('decision.pending', later).length, { timeout: 15_000 }).toBe(1);
    expect(receiver.received).toHaveLength(expected.length + 1);
  });

  it('with --redis keep their progress in Redis: a replica with a fresh data folder resumes it', async () => {
    receiver = await Receiver.onFreePort();
    const redis = await startRedisServer();
    try {
      const flags = ['--notify-url', receiver.url, '--redis', `${redis.url}/0`];
      const manifestsDir = await tempManifests();
      const first = await start({ dataDir: await tempDir(), manifestsDir }, flags);
      const missed = await propose(first.url, 'deploy.production', { service: 'web', version: '7' });
      await first.stop();
      // Another replica (its own empty data folder) takes over; the receiver comes up.
      const second = await start({ dataDir: await tempDir(), manifestsDir }, flags);
      await receiver.up();
      await expect.poll(() => receiver!.of('decision.pending', missed).length, { timeout: 20_000 }).toBe(1);
      const later = await propose(second.url, 'deploy.production', { service: 'web', version: '8' });
      await expect.poll(() => receiver!.of('decision.pending', later).length, { timeout: 15_000 }).toBe(1);
      expect(receiver.received).toHaveLength(2);
    } finally {
      await arbiter?.stop();
      arbiter = undefined;
      await redis.dispose();
    }
  });

  it('in Slack format: text and blocks with the reason, the expiry and the review commands', async () => {
    receiver = await Receiver.onFreePort();
    await receiver.up();
    const dirs = { dataDir: await tempDir(), manifestsDir: await tempManifests() };
    const running = await start(dirs, ['--notify-url', receiver.url, '--notify-format', 'slack']);
    const id = await propose(running.url, 'deploy.production', { service: 'web', version: '5' });
    await expect.poll(() => receiver!.received.length, { timeout: 15_000 }).toBe(1);
    const [message] = receiver.received;
    expect(message!.headers['x-arbiter-signature']).toBeUndefined();
    const { text, blocks } = message!.body as { text: string; blocks: unknown[] };
    expect(text).toContain(id);
    expect(text).toContain('waits for review');
    const rendered = JSON.stringify(blocks);
    expect(rendered).toContain(`kubectl arbiter approve ${id}`);
    expect(rendered).toContain(`kubectl arbiter deny ${id}`);
    expect(rendered).toMatch(/Reason:\*/);
    expect(rendered).toMatch(/Expires:\* 20\d\d-/);
  });

  it('tell of a broken chain once, found by the verification at start', async () => {
    receiver = await Receiver.onFreePort();
    await receiver.up();
    const dirs = { dataDir: await tempDir(), manifestsDir: await tempManifests() };
    const flags = ['--notify-url', receiver.url, '--verify-interval', '1'];
    const running = await start(dirs, flags);
    await propose(running.url, 'database.query', { query: 'select 1' });
    await running.stop();
    const log = join(dirs.dataDir, 'audit.jsonl');
    await writeFile(log, (await readFile(log, 'utf8')).replace('select 1', 'select 2'));

    await start(dirs, flags);
    await expect.poll(() => receiver!.received.length, { timeout: 15_000 }).toBe(1);
    const [broken] = receiver.received;
    expect(broken!.body).toMatchObject({
      type: 'audit.chain_broken',
      decision_id: null,
      reason: expect.stringMatching(/^the audit chain does not hold at seq \d+/),
    });
    // Verified again every second, the same break is not told again.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(receiver.received).toHaveLength(1);
  });

  it('refuses notify flags that make no sense, with a clear message', async () => {
    const dirs = { dataDir: await tempDir(), manifestsDir: await tempManifests() };
    await expect(start(dirs, ['--notify-format', 'slack'])).rejects.toThrow(
      /--notify-format needs --notify-url/,
    );
    await expect(start(dirs, ['--notify-url', 'ftp://x'])).rejects.toThrow(/is not an http\(s\) URL/);
    await expect(start(dirs, ['--notify-url', 'http://x', '--notify-format', 'xml'])).rejects.toThrow(
      /use json or slack/,
    );
  });
});
