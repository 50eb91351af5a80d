import { writeFile } from 'node:fs/promises';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  call,
  KEYS,
  removeDir,
  startArbiter,
  tempDir,
  tempManifests,
  type ArbiterProcess,
} from '../support/arbiter-process.js';
import { teamGrantsYaml } from '../support/team-grants.js';
import { pluginEnv, runPlugin, startPlugin } from './support/run-plugin.js';

/**
 * `kubectl arbiter -n NAMESPACE` and `-A` against a real `arbiter serve`, with escalated
 * decisions of namespaced actors (granted by cluster ActorGrants) and of a cluster actor.
 */
const TEAM_GRANTS = teamGrantsYaml(['team-a/bot', 'team-b/bot'], 'deploy.production', 'ai-agent');

let arbiter: ArbiterProcess;
let dataDir: string;
let manifestsDir: string;
let home: string;
const ids: Record<string, string> = {};

const escalate = async (actor: string) => {
  const res = await call(arbiter.url, 'POST', '/api/v1/governance/propose', {
    key: KEYS.admin,
    body: {
      actor: { id: actor, type: 'ai-agent' },
      action: {
        capability: 'deploy.production',
        parameters: { service: 'web', version: String(Math.random()) },
      },
    },
  });
  expect(res.body.outcome, JSON.stringify(res.body)).toBe('ESCALATE');
  return res.body.decision_id as string;
};
const pending = (...flags: string[]) =>
  runPlugin(['--server', arbiter.url, '--token', KEYS.reviewer, 'pending', ...flags], pluginEnv(home));
const rowsOf = (stdout: string) =>
  stdout
    .trimEnd()
    .split('\n')
    .map((l) => l.split(/\s{2,}/));

beforeAll(async () => {
  dataDir = await tempDir();
  manifestsDir = await tempManifests();
  home = await tempDir('arbiter-kubectl-home-');
  await writeFile(join(manifestsDir, 'team-grants.yaml'), TEAM_GRANTS);
  arbiter = await startArbiter({ dataDir, manifestsDir });
  for (const actor of ['team-a/bot', 'team-b/bot', 'agent-001']) ids[actor] = await escalate(actor);
});
afterAll(async () => {
  await arbiter.stop();
  await removeDir(dataDir);
  await removeDir(manifestsDir);
  await removeDir(home);
});

/** An HTTP proxy to Arbiter that records the URL of every request it forwards. */
async function recordingProxy(target: string): Promise<{ server: Server; url: string; urls: string[] }> {
  const urls: string[] = [];
  const server = createServer((req, res) => {
    urls.push(req.url ?? '');
    const upstream = request(
      new URL(req.url ?? '/', target),
      { method: req.method, headers: req.headers },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, urls };
}

describe('GET /api/v1/governance/pending?namespace=', () => {
  const list = (query: string) =>
    call(arbiter.url, 'GET', `/api/v1/governance/pending${query}`, { key: KEYS.reviewer });

  it("lists only that namespace's actors' decisions, with their total", async () => {
    const teamA = await list('?namespace=team-a');
    expect(teamA.status, JSON.stringify(teamA.body)).toBe(200);
    expect(teamA.body.decisions.map((d: any) => d.decision_id)).toEqual([ids['team-a/bot']]);
    expect(teamA.body.total).toBe(1);
    const firstOfB = await list('?namespace=team-b&limit=1');
    expect(firstOfB.body).toMatchObject({ total: 1, cursor: null });
    expect(firstOfB.body.decisions.map((d: any) => d.decision_id)).toEqual([ids['team-b/bot']]);
    expect((await list('?namespace=team-c')).body).toEqual({ decisions: [], total: 0, cursor: null });
    expect((await list('')).body.total).toBe(3);
  });

  it('refuses a namespace that is no namespace name with 400', async () => {
    const bad = await list('?namespace=Team_A');
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('INVALID_REQUEST');
    expect(bad.body.error.message).toContain('namespace');
  });
});

describe('kubectl arbiter: namespaces of records', () => {
  it('pending -n NAMESPACE asks the server for that namespace only', async () => {
    const proxy = await recordingProxy(arbiter.url);
    try {
      const table = await runPlugin(
        ['--server', proxy.url, '--token', KEYS.reviewer, 'pending', '-n', 'team-a'],
        pluginEnv(home),
      );
      expect(table.code, table.stderr).toBe(0);
      expect(
        rowsOf(table.stdout)
          .slice(1)
          .map((r) => r[0]),
      ).toEqual([ids['team-a/bot']]);
      expect(proxy.urls.filter((u) => u.includes('/governance/pending'))).toEqual([
        '/api/v1/governance/pending?limit=200&namespace=team-a',
      ]);
    } finally {
      await new Promise((resolve) => proxy.server.close(resolve));
    }
  });

  it("pending -n NAMESPACE lists only that namespace's decisions, in JSON too", async () => {
    const table = await pending('-n', 'team-a');
    expect(table.code, table.stderr).toBe(0);
    const [header, ...rows] = rowsOf(table.stdout);
    expect(header![0]).toBe('ID');
    expect(rows.map((r) => r[0])).toEqual([ids['team-a/bot']]);
    const json = await pending('--namespace', 'team-b', '-o', 'json');
    expect(JSON.parse(json.stdout).decisions.map((d: any) => d.decision_id)).toEqual([ids['team-b/bot']]);
    const none = await pending('-n', 'team-c');
    expect(none).toMatchObject({ code: 0, stdout: '', stderr: 'no decisions are waiting for review\n' });
  });

  it('pending -A lists every decision with a NAMESPACE column; without either, every decision without it', async () => {
    const all = await pending('-A');
    expect(all.code, all.stderr).toBe(0);
    const [header, ...rows] = rowsOf(all.stdout);
    expect(header!.slice(0, 2)).toEqual(['NAMESPACE', 'ID']);
    expect(Object.fromEntries(rows.map((r) => [r[1], r[0]]))).toEqual({
      [ids['team-a/bot']!]: 'team-a',
      [ids['team-b/bot']!]: 'team-b',
      [ids['agent-001']!]: '-',
    });
    const plain = await pending();
    const [plainHeader, ...plainRows] = rowsOf(plain.stdout);
    expect(plainHeader![0]).toBe('ID');
    expect(plainRows.map((r) => r[0]).sort()).toEqual(Object.values(ids).sort());
  });

  it('refuses -n with -A, and a namespace that is no namespace name, as usage errors', async () => {
    expect(await pending('-n', 'team-a', '-A')).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--namespace and --all-namespaces exclude each other'),
    });
    expect((await pending('-n', 'Team_A')).code).toBe(2);
  });

  it("audit tail -n NAMESPACE prints only that namespace's entries; -A names each entry's namespace", async () => {
    const args = (...flags: string[]) => [
      '--server',
      arbiter.url,
      '--token',
      KEYS.auditor,
      'audit',
      'tail',
      ...flags,
    ];
    const teamA = startPlugin(args('-n', 'team-a'), pluginEnv(home));
    const all = startPlugin(args('-A'), pluginEnv(home));
    try {
      for (const tail of [teamA, all])
        await tail.waitFor('the stream to open', (o) => o.stderr.includes('following the audit log'));
      const other = await escalate('team-b/bot');
      const mine = await escalate('team-a/bot');
      await teamA.waitFor(`the decision ${mine}`, (o) => o.stdout.includes(mine));
      await all.waitFor(`the decision ${mine}`, (o) => o.stdout.includes(mine));
      expect(teamA.output.stdout).not.toContain(other);
      const line = teamA.output.stdout.split('\n').find((l) => l.includes(mine))!;
      expect(line).toMatch(/ {2}actor=team-a\/bot capability=deploy\.production/);
      expect(all.output.stdout.split('\n').find((l) => l.includes(other))).toMatch(
        / {2}namespace=team-b actor=team-b\/bot /,
      );
    } finally {
      expect(await teamA.stop()).toBe(0);
      expect(await all.stop()).toBe(0);
    }
  });
});
