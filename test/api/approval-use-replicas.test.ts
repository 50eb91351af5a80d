import { cp } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNotesServer, type NotesServer } from '../../examples/mcp/notes-server.mjs';
import { startRedisServer, type RedisServer } from '../env/redis-server.js';
import {
  call,
  KEYS,
  REPO,
  removeDir,
  startArbiter,
  tempManifests,
  type ArbiterProcess,
} from '../support/arbiter-process.js';

/**
 * Two replicas on one Redis, and many simultaneous tries of one approval split across
 * them: exactly one is allowed, every other one is refused and says the approval was used.
 */
const TRIES = 50;

let redis: RedisServer;
let notes: NotesServer;
let manifestsDir: string;
let replicas: ArbiterProcess[] = [];

beforeAll(async () => {
  redis = await startRedisServer();
  notes = await startNotesServer();
  manifestsDir = await tempManifests();
  await cp(join(REPO, 'examples/mcp/manifests'), join(manifestsDir, 'mcp'), { recursive: true });
  const args = ['--redis', `${redis.url}/0`, '--mcp-server', `notes=${notes.url}`];
  replicas = [await startArbiter({ manifestsDir, args }), await startArbiter({ manifestsDir, args })];
}, 60_000);

afterAll(async () => {
  for (const replica of replicas) await replica.stop();
  await notes?.close();
  await redis?.dispose();
  for (const replica of replicas) await removeDir(replica.dataDir);
  await removeDir(manifestsDir);
});

/** The replica the i-th try goes to: every other one, so that both take half. */
const replicaFor = (i: number) => replicas[i % replicas.length]!;

async function approve(decisionId: string, on: ArbiterProcess) {
  const approved = await call(on.url, 'POST', `/api/v1/governance/decisions/${decisionId}/approve`, {
    key: KEYS.reviewer,
    body: { comment: 'once' },
  });
  expect(approved.status, JSON.stringify(approved.body)).toBe(200);
  return approved.body;
}

/** The review actions recorded on a decision, as one replica reads them from the shared log. */
async function reviewsOf(decisionId: string): Promise<string[]> {
  const res = await call(replicas[0]!.url, 'GET', `/api/v1/governance/decisions/${decisionId}`, {
    key: KEYS.auditor,
  });
  expect(res.status).toBe(200);
  return res.body.audit.reviews.map((r: { action: string }) => r.action);
}

describe('an approval is used at most once across replicas', () => {
  it('redeems a confirmation token once, whatever the number of replicas it is sent to at once', async () => {
    const write = {
      actor: { id: 'agent-001', type: 'ai-agent' },
      action: { capability: 'database.write', parameters: { database: 'production', statement: 'x' } },
    };
    const propose = (on: ArbiterProcess, context?: object) =>
      call(on.url, 'POST', '/api/v1/governance/propose', {
        key: KEYS.agent,
        body: context ? { ...write, context } : write,
      });
    const first = await propose(replicas[0]!);
    expect(first.body.outcome).toBe('REQUIRE_CONFIRMATION');
    const { confirmation_token: token } = await approve(first.body.decision_id, replicas[1]!);

    const tries = await Promise.all(
      Array.from({ length: TRIES }, (_, i) => propose(replicaFor(i), { confirmation_token: token })),
    );

    const allowed = tries.filter((t) => t.status === 200);
    expect(allowed.map((t) => t.body.outcome)).toEqual(['ALLOW']);
    const refused = tries.filter((t) => t.status !== 200);
    expect(refused).toHaveLength(TRIES - 1);
    for (const t of refused) {
      expect(t.status).toBe(409);
      expect(t.body.error).toMatchObject({
        code: 'CONFLICT',
        message: 'context.confirmation_token was already used',
      });
    }
    expect(await reviewsOf(first.body.decision_id)).toEqual(['approve', 'confirmation_used']);
  }, 60_000);

  it('forwards an approved MCP tool call once, whatever the number of replicas it is retried on at once', async () => {
    const sessions = await Promise.all(replicas.map((replica) => agentSession(replica)));
    try {
      notes.notes.set('old', 'to delete');
      const callDelete = (client: Client) =>
        client.callTool({ name: 'delete_note', arguments: { title: 'old' } }) as Promise<CallToolResult>;
      const waiting = await callDelete(sessions[0]!);
      const id = waiting._meta?.['dev.arbiter/decision_id'] as string;
      expect(textOf(waiting)).toContain('waits for review (ESCALATE');
      await approve(id, replicas[1]!);
      const before = notes.calls.length;

      const tries = await Promise.all(
        Array.from({ length: TRIES }, (_, i) => callDelete(sessions[i % sessions.length]!)),
      );

      const forwarded = tries.filter((t) => !t.isError);
      expect(forwarded.map(textOf)).toEqual(['deleted "old"']);
      expect(notes.calls.slice(before)).toEqual([{ tool: 'delete_note', arguments: { title: 'old' } }]);
      const refused = tries.filter((t) => t.isError);
      expect(refused).toHaveLength(TRIES - 1);
      for (const t of refused) {
        expect(textOf(t)).toContain('waits for review (ESCALATE');
        expect(textOf(t)).toContain(`the approval of decision ${id} was already used`);
      }
      expect(await reviewsOf(id)).toEqual(['approve', 'confirmation_used']);
    } finally {
      await Promise.all(sessions.map((client) => client.close()));
    }
  }, 60_000);
});

async function agentSession(replica: ArbiterProcess): Promise<Client> {
  const client = new Client({ name: 'test-agent', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${replica.url}/mcp/notes`), {
    requestInit: { headers: { Authorization: `Bearer ${KEYS.agent}` } },
  });
  await client.connect(transport);
  return client;
}

const textOf = (result: CallToolResult) =>
  result.content.map((c) => (c.type === 'text' ? c.text : `[${c.type}]`)).join('\n');
