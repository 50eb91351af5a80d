import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../env/free-ports.js';
import { call, KEYS, removeDir, tempDir, useArbiter } from '../support/arbiter-process.js';
import { isOneLine, pluginEnv, runPlugin, startPlugin } from './support/run-plugin.js';

/**
 * `kubectl arbiter` (dist/kubectl/main.js) with --server against a real `arbiter serve`
 * (the examples' manifests and API keys), as a reviewer at a terminal uses it.
 */
const arbiter = useArbiter();
let home: string;

beforeAll(async () => {
  home = await tempDir('arbiter-kubectl-home-');
});
afterAll(async () => {
  await removeDir(home);
});

const plugin = (args: readonly string[], env: Record<string, string> = {}) =>
  runPlugin(['--server', arbiter.url, ...args], pluginEnv(home, env));
const as = (key: string, ...args: string[]) => plugin([...args, '--token', key]);

const propose = async (capability: string, parameters: Record<string, unknown>, context = {}) => {
  const res = await call(arbiter.url, 'POST', '/api/v1/governance/propose', {
    key: KEYS.agent,
    body: { actor: { id: 'agent-001', type: 'ai-agent' }, action: { capability, parameters }, context },
  });
  expect(res.status).toBe(200);
  return res.body as { decision_id: string; outcome: string };
};
const escalated = async () => {
  const decision = await propose('deploy.production', { service: 'web', version: String(Math.random()) });
  expect(decision.outcome).toBe('ESCALATE');
  return decision.decision_id;
};
const statusOf = async (id: string) =>
  (await call(arbiter.url, 'GET', `/api/v1/governance/decisions/${id}`, { key: KEYS.reviewer })).body.audit
    .status as string;

describe('kubectl arbiter --server URL', () => {
  it('pending: a table row for each waiting decision, and the same as JSON', async () => {
    const id = await escalated();
    const table = await as(KEYS.reviewer, 'pending');
    expect(table.code, table.stderr).toBe(0);
    const [header, ...rows] = table.stdout.trimEnd().split('\n');
    expect(header!.split(/\s{2,}/)).toEqual([
      'ID',
      'AGE',
      'EXPIRES IN',
      'ACTOR',
      'CAPABILITY',
      'OUTCOME',
      'REASON',
    ]);
    const row = rows.find((r) => r.startsWith(id));
    expect(row, table.stdout).toBeDefined();
    expect(row!.split(/\s{2,}/)).toEqual([
      id,
      expect.stringMatching(/^\d+s$/),
      expect.stringMatching(/^(59m|60m)$/),
      'agent-001',
      'deploy.production',
      'ESCALATE',
      expect.stringContaining('0.95'),
    ]);

    const asJson = await as(KEYS.reviewer, 'pending', '-o', 'json');
    expect(asJson.code, asJson.stderr).toBe(0);
    const listed = JSON.parse(asJson.stdout).decisions.find((d: any) => d.decision_id === id);
    expect(listed.audit).toMatchObject({ status: 'pending', capability: 'deploy.production' });
  });

  it('get: the trail with parameters and checks; a reviewer without audit:read sees the decision', async () => {
    const id = await escalated();
    const trail = await as(KEYS.auditor, 'get', id);
    expect(trail.code, trail.stderr).toBe(0);
    expect(trail.stdout).toContain(`Decision:    ${id}`);
    expect(trail.stdout).toMatch(/^Parameters: +\{"service":"web","version":"[^"]+"\}$/m);
    expect(trail.stdout).toMatch(/^Checks: +capability pass, authority pass$/m);
    expect(trail.stdout).toMatch(/^Review: +pending, expires in /m);
    expect(trail.stdout).toContain('chain verified');

    const json = await as(KEYS.auditor, 'get', id, '-o', 'json');
    expect(JSON.parse(json.stdout)).toMatchObject({ decision_id: id, review: { status: 'pending' } });

    const summary = await as(KEYS.reviewer, 'get', id);
    expect(summary.code, summary.stderr).toBe(0);
    expect(summary.stderr).toContain('lacks the scope audit:read');
    expect(summary.stdout).toMatch(/^Capability: +deploy\.production$/m);
    expect(summary.stdout).not.toContain('Parameters:');
  });

  it('approve: the confirmation token is printed once, labelled, and confirms the proposal', async () => {
    const parameters = { database: 'production', statement: `update t set a=${Math.random()}` };
    const first = await propose('database.write', parameters);
    expect(first.outcome).toBe('REQUIRE_CONFIRMATION');
    const approved = await as(
      KEYS.reviewer,
      'approve',
      first.decision_id,
      '--comment',
      'checked the statement',
    );
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stdout).toContain(`decision ${first.decision_id} (REQUIRE_CONFIRMATION) approved`);
    const tokens = approved.stdout.match(/ct_[\w.-]+/g) ?? [];
    expect(tokens).toHaveLength(1);
    expect(approved.stdout).toMatch(/Confirmation token \(shown only this once/);

    const confirmed = await propose('database.write', parameters, { confirmation_token: tokens[0] });
    expect(confirmed.outcome).toBe('ALLOW');
    const trail = await as(KEYS.admin, 'get', first.decision_id);
    expect(trail.stdout).toMatch(/approve by reviewer: "checked the statement"/);
  });

  it('approving twice: one line naming the conflict, exit 1', async () => {
    const id = await escalated();
    expect((await as(KEYS.reviewer, 'approve', id)).code).toBe(0);
    const again = await as(KEYS.reviewer, 'approve', id);
    expect(again.code).toBe(1);
    expect(again.stdout).toBe('');
    expect(isOneLine(again.stderr), again.stderr).toBe(true);
    expect(again.stderr).toBe(`error: conflict (409 CONFLICT): decision ${id} is already approved\n`);
  });

  it('deny: the decision is denied, with the comment in its trail', async () => {
    const id = await escalated();
    const denied = await as(KEYS.reviewer, 'deny', id, '--comment', 'not on a Friday');
    expect(denied.code, denied.stderr).toBe(0);
    expect(denied.stdout).toBe(`decision ${id} (ESCALATE) denied\n`);
    expect(await statusOf(id)).toBe('denied');
    const trail = await as(KEYS.admin, 'get', id);
    expect(trail.stdout).toMatch(/deny by reviewer: "not on a Friday"/);
  });

  it('refusals are one line on stderr with a non-zero exit: 401, 403, 404', async () => {
    const id = await escalated();
    const cases = [
      {
        run: as('not-a-key', 'pending'),
        line: /^error: Arbiter did not accept the token \(401 UNAUTHENTICATED\)/,
      },
      { run: plugin(['pending'], { ARBITER_TOKEN: 'not-a-key' }), line: /\(401 UNAUTHENTICATED\)/ },
      { run: as(KEYS.agent, 'approve', id), line: /^error: not allowed \(403 FORBIDDEN\)/ },
      { run: as(KEYS.reviewer, 'deny', 'no-such-decision'), line: /^error: not found \(404 NOT_FOUND\)/ },
    ];
    for (const { run, line } of cases) {
      const result = await run;
      expect(result.code).toBe(1);
      expect(isOneLine(result.stderr), result.stderr).toBe(true);
      expect(result.stderr).toMatch(line);
    }
    expect(await statusOf(id)).toBe('pending');
  });

  it('the token comes from ARBITER_TOKEN, else from the kubeconfig user', async () => {
    const id = await escalated();
    const fromEnv = await plugin(['pending'], { ARBITER_TOKEN: KEYS.reviewer });
    expect(fromEnv.code, fromEnv.stderr).toBe(0);
    expect(fromEnv.stdout).toContain(id);

    // A kubeconfig whose user holds a bearer token: the plugin presents it to Arbiter.
    const kubeconfig = join(home, 'reviewer.kubeconfig');
    await writeFile(kubeconfig, kubeconfigWithToken(KEYS.reviewer));
    const fromKubeconfig = await plugin(['pending', '--kubeconfig', kubeconfig]);
    expect(fromKubeconfig.code, fromKubeconfig.stderr).toBe(0);
    expect(fromKubeconfig.stdout).toContain(id);
    const viaEnv = await plugin(['pending'], { KUBECONFIG: kubeconfig });
    expect(viaEnv.stdout).toContain(id);

    const none = await plugin(['pending']);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/^error: no token: pass --token, set ARBITER_TOKEN/);
    expect(isOneLine(none.stderr)).toBe(true);
  });

  it('audit tail: prints an entry appended after it started, until stopped', async () => {
    const tail = startPlugin(
      ['--server', arbiter.url, '--token', KEYS.auditor, 'audit', 'tail'],
      pluginEnv(home),
    );
    try {
      await tail.waitFor('the stream to open', (o) => o.stderr.includes('following the audit log'));
      const id = await escalated();
      await tail.waitFor(`the decision ${id}`, (o) => o.stdout.includes(id));
      const line = tail.output.stdout.split('\n').find((l) => l.includes(id))!;
      expect(line).toMatch(/ #\d+ {2}governance\.decision {2}actor=agent-001 capability=deploy\.production/);
      expect(line).toContain('outcome=ESCALATE');
    } finally {
      expect(await tail.stop()).toBe(0);
    }
  });

  it('audit tail -o json --event-type: one entry a line, of that type only', async () => {
    const tail = startPlugin(
      [
        '--server',
        arbiter.url,
        '--token',
        KEYS.auditor,
        'audit',
        'tail',
        '-o',
        'json',
        '--event-type',
        'governance.review',
      ],
      pluginEnv(home),
    );
    try {
      await tail.waitFor('the stream to open', (o) => o.stderr.includes('following the audit log'));
      const id = await escalated();
      expect((await as(KEYS.reviewer, 'deny', id)).code).toBe(0);
      await tail.waitFor(`the review of ${id}`, (o) => o.stdout.includes(id));
      const entries = tail.output.stdout
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(entries.map((e) => e.event_type)).toEqual(entries.map(() => 'governance.review'));
      expect(entries.find((e) => e.decision_id === id)).toMatchObject({ data: { action: 'deny' } });
    } finally {
      await tail.stop();
    }
  });

  it('verify: ok and exit 0 on a sound chain', async () => {
    const verified = await as(KEYS.auditor, 'verify');
    expect(verified.code, verified.stderr).toBe(0);
    expect(verified.stdout).toMatch(/^ok: the audit chain holds: \d+ entries checked, head seq \d+ /);
    const json = await as(KEYS.auditor, 'verify', '-o', 'json');
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: true });
  });

  it('an unreachable server and a wrong command line are one line each', async () => {
    const closedPort = await freePort();
    const unreachable = await runPlugin(
      ['--server', `http://127.0.0.1:${closedPort}`, '--token', 'x', 'verify'],
      pluginEnv(home),
    );
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toBe(
      `error: cannot reach Arbiter at http://127.0.0.1:${closedPort}: connect ECONNREFUSED 127.0.0.1:${closedPort}\n`,
    );
    for (const args of [
      ['get'],
      ['approve', 'a', 'b'],
      ['pending', '--comment', 'x'],
      ['frobnicate'],
      ['-o', 'yaml', 'pending'],
    ]) {
      const wrong = await plugin([...args, '--token', 'x']);
      expect(wrong.code, args.join(' ')).toBe(2);
      expect(wrong.stderr).toMatch(/^error: .+ \(see kubectl arbiter --help\)\n$/);
    }
    const help = await runPlugin(['--help'], pluginEnv(home));
    expect(help.code).toBe(0);
    for (const command of ['pending', 'get ID', 'approve ID', 'deny ID', 'audit tail', 'verify']) {
      expect(help.stdout).toContain(`  ${command}`);
    }
  });
});

/** A kubeconfig as kubectl writes one, its user authenticating with a static token. */
function kubeconfigWithToken(token: string): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:6443' } }],
    users: [{ name: 'reviewer', user: { token } }],
    contexts: [{ name: 'c', context: { cluster: 'c', user: 'reviewer' } }],
    'current-context': 'c',
  });
}
