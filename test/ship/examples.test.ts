import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import {
  call,
  EXAMPLE_MANIFESTS,
  KEYS,
  removeDir,
  startArbiter,
  type ArbiterProcess,
} from '../support/arbiter-process.js';

/** The GitOps example set (examples/manifests), loaded by a real server as `npm start` does. */
let arbiter: ArbiterProcess;
const admin = (method: string, path: string, body?: unknown) =>
  call(arbiter.url, method, `/api/v1${path}`, { key: KEYS.admin, ...(body === undefined ? {} : { body }) });

beforeAll(async () => {
  arbiter = await startArbiter();
});
afterAll(async () => {
  await arbiter.stop();
  await removeDir(arbiter.dataDir);
  await removeDir(arbiter.manifestsDir);
});

describe('examples/manifests', () => {
  it('loads every object, each accepted', async () => {
    const declared: Record<string, string[]> = { Capability: [], Policy: [], ActorGrant: [] };
    for (const file of await readdir(EXAMPLE_MANIFESTS)) {
      for (const doc of parseAllDocuments(await readFile(join(EXAMPLE_MANIFESTS, file), 'utf8'))) {
        const object = doc.toJS() as { kind: string; metadata: { name: string }; spec: { name?: string } };
        declared[object.kind]!.push(object.kind === 'Capability' ? object.spec.name! : object.metadata.name);
      }
    }
    const capabilities = await admin('GET', '/capabilities?limit=200');
    expect(capabilities.body.capabilities.map((c: { name: string }) => c.name).sort()).toEqual(
      declared.Capability!.sort(),
    );
    expect(capabilities.body.capabilities.map((c: { name: string }) => c.name)).toEqual(
      expect.arrayContaining(['database.query', 'email.send', 'deploy.production', 'payments.transfer']),
    );
    const policies = await admin('GET', '/policies?limit=200');
    expect(policies.body.policies.map((p: { name: string }) => p.name).sort()).toEqual(
      declared.Policy!.sort(),
    );
    for (const policy of policies.body.policies)
      expect(policy.status, policy.name).toMatchObject({ ready: true });
    const grants = await admin('GET', '/actors/agent-001/grants');
    expect(grants.body.grants.map((g: { capability: string }) => g.capability).sort()).toEqual(
      ['database.query', 'database.write', 'deploy.production', 'email.send', 'payments.transfer'].sort(),
    );
  });

  it('has policies with every outcome, priorities and conditions (email-recipients: ESCALATE and a higher-priority ALLOW)', async () => {
    const policies = (await admin('GET', '/policies?limit=200')).body.policies as {
      rules: { outcome: string; priority: number; condition?: string }[];
    }[];
    const rules = policies.flatMap((p) => p.rules);
    expect(new Set(rules.map((r) => r.outcome))).toEqual(
      new Set(['ALLOW', 'DENY', 'ESCALATE', 'REQUIRE_CONFIRMATION']),
    );
    expect(rules.every((r) => typeof r.condition === 'string' && r.condition.length > 0)).toBe(true);
    expect(new Set(rules.map((r) => r.priority)).size).toBeGreaterThan(1);

    // A grant without a time window, so the outcome does not depend on the hour.
    expect((await admin('POST', '/actors/mailer-bot/grants', { capability: 'email.send' })).status).toBe(201);
    const send = async (to: string) =>
      (
        await admin('POST', '/governance/propose', {
          actor: { id: 'mailer-bot', type: 'automation' },
          action: { capability: 'email.send', parameters: { to, subject: 'Quarterly report' } },
        })
      ).body;
    expect(await send('team@example.com')).toMatchObject({ outcome: 'ALLOW' });
    const external = await send('someone@elsewhere.net');
    expect(external.outcome).toBe('ESCALATE');
    const partner = await send('ops@partner.example.org');
    expect(partner.outcome).toBe('ALLOW');
    const trail = await admin('GET', `/governance/decisions/${partner.decision_id}`);
    expect(JSON.stringify(trail.body)).toContain('email-recipients');
  });

  it("agent-001's email grant has a time window and its query grant a rate limit", async () => {
    const grants = (await admin('GET', '/actors/agent-001/grants')).body.grants as {
      capability: string;
      constraints: Record<string, unknown>;
    }[];
    expect(grants.find((g) => g.capability === 'email.send')?.constraints).toMatchObject({
      time_window: { start: '08:00', end: '18:00', timezone: 'Europe/Berlin' },
    });
    expect(grants.find((g) => g.capability === 'database.query')?.constraints).toMatchObject({
      rate_limit: { max_requests: 100, window_seconds: 60 },
    });
    // The window is enforced: the decision names it either way (inside: ALLOW; outside: DENY).
    const decision = await call(arbiter.url, 'POST', '/api/v1/governance/propose', {
      key: KEYS.agent,
      body: {
        actor: { id: 'agent-001', type: 'ai-agent' },
        action: { capability: 'email.send', parameters: { to: 'team@example.com', subject: 'hi' } },
      },
    });
    const hour = Number(
      new Intl.DateTimeFormat('en-GB', { hour: '2-digit', hour12: false, timeZone: 'Europe/Berlin' }).format(
        new Date(decision.body.timestamp),
      ),
    );
    expect(decision.body.outcome).toBe(hour >= 8 && hour < 18 ? 'ALLOW' : 'DENY');
  });
});
