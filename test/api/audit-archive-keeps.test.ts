import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CONFIG_EVENT_TYPES } from '../../src/governance/audited-configuration.js';
import { runArbiter } from '../cli/support/cli-run.js';
import { startRedisServer } from '../env/redis-server.js';
import { checkpointedUpTo } from '../support/audit-checkpoints.js';
import {
  type ArbiterProcess,
  call,
  KEYS,
  removeDir,
  startArbiter,
  tempDir,
  tempManifests,
} from '../support/arbiter-process.js';
import { Receiver } from '../support/webhook-receiver.js';

/** Long enough for an archive run and a restart on a busy machine; the test waits it out. */
const PENDING_TTL_SECONDS = 45;
const TEST_TIMEOUT_MS = 180_000;

interface Entry {
  seq: number;
  event_type: string;
  capability: string | null;
  decision_id: string | null;
}

let running: ArbiterProcess[] = [];
let receiver: Receiver | undefined;
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const arbiter of running) await arbiter.stop();
  running = [];
  await receiver?.down();
  receiver = undefined;
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function start(dirs: { dataDir: string; manifestsDir: string }, args: string[]) {
  const arbiter = await startArbiter({ ...dirs, args });
  running.push(arbiter);
  return arbiter;
}

async function stop(arbiter: ArbiterProcess): Promise<void> {
  await arbiter.stop();
  running = running.filter((a) => a !== arbiter);
}

/** Every retained entry, oldest first (these logs stay small). */
async function entries(url: string): Promise<Entry[]> {
  const all: Entry[] = [];
  let cursor: string | null = null;
  do {
    const query = `/api/v1/audit/log?order=asc&limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const page = await call(url, 'GET', query, { key: KEYS.auditor });
    expect(page.status).toBe(200);
    all.push(...(page.body as { entries: Entry[] }).entries);
    cursor = (page.body as { cursor: string | null }).cursor;
  } while (cursor);
  return all;
}

const propose = async (url: string, capability: string, parameters: Record<string, unknown>) => {
  const res = await call(url, 'POST', '/api/v1/governance/propose', {
    key: KEYS.agent,
    body: { actor: { id: 'agent-001', type: 'ai-agent' }, action: { capability, parameters } },
  });
  expect(res.status).toBe(200);
  return res.body as { decision_id: string; outcome: string };
};

/**
 * The configuration's entries, a checkpoint after them, then a decision that waits for a
 * reviewer and a checkpoint after it: an archive up to now would cover both.
 */
async function decisionWaitingBehindCheckpoint(url: string): Promise<{ id: string; seq: number }> {
  const lastConfigSeq = (await entries(url))
    .filter((e) => (CONFIG_EVENT_TYPES as readonly string[]).includes(e.event_type))
    .at(-1)!.seq;
  for (let i = 0; i < 5; i += 1) await propose(url, 'database.query', { query: `select ${i}` });
  await checkpointedUpTo(url, lastConfigSeq);
  const waiting = await propose(url, 'deploy.production', { service: 'web', version: 'v2' });
  expect(waiting.outcome).toBe('ESCALATE');
  for (let i = 0; i < 5; i += 1) await propose(url, 'database.query', { query: `select ${i} again` });
  const seq = (await entries(url)).find((e) => e.decision_id === waiting.decision_id)!.seq;
  await checkpointedUpTo(url, seq + 1);
  return { id: waiting.decision_id, seq };
}

/** The decision is in the reviewers' queue and can be read, still pending. */
async function expectReviewable(url: string, decisionId: string): Promise<void> {
  const queue = await call(url, 'GET', '/api/v1/governance/pending', { key: KEYS.reviewer });
  expect(queue.status, JSON.stringify(queue.body)).toBe(200);
  const listed = (queue.body as { decisions: Array<{ decision_id: string }> }).decisions;
  expect(listed.map((d) => d.decision_id)).toContain(decisionId);
  const decision = await call(url, 'GET', `/api/v1/governance/decisions/${decisionId}`, {
    key: KEYS.reviewer,
  });
  expect(decision.status).toBe(200);
  expect(decision.body).toMatchObject({ audit: { status: 'pending' } });
  const metrics = String((await call(url, 'GET', '/metrics')).body);
  expect(metrics).toMatch(/^arbiter_pending_decisions 1$/m);
}

/** One capability's description changes while the server is stopped. */
async function changeOneCapability(manifestsDir: string): Promise<void> {
  const file = join(manifestsDir, 'capabilities.yaml');
  const text = await readFile(file, 'utf8');
  const changed = text.replace('description: Run a read-only SQL query', 'description: Run one SQL query');
  expect(changed).not.toBe(text);
  await writeFile(file, changed);
}

/** After the restart, only the changed capability was recorded as a configuration change. */
async function expectOnlyTheChangeRecorded(url: string, headBefore: number): Promise<void> {
  const recorded = (await entries(url)).filter(
    (e) => e.seq > headBefore && (CONFIG_EVENT_TYPES as readonly string[]).includes(e.event_type),
  );
  expect(recorded.map((e) => [e.event_type, e.capability])).toEqual([
    ['capability.registered', 'database.query'],
  ]);
}

/** Its deadline passes: the expiry is recorded once, notified, and it leaves the queue. */
async function expectExpiry(url: string, decisionId: string): Promise<void> {
  await expect
    .poll(
      async () => {
        const res = await call(url, 'GET', `/api/v1/governance/decisions/${decisionId}`, {
          key: KEYS.reviewer,
        });
        return (res.body as { audit: { reviews: Array<{ action: string }> } }).audit.reviews.map(
          (r) => r.action,
        );
      },
      { timeout: (PENDING_TTL_SECONDS + 15) * 1000, interval: 250 },
    )
    .toEqual(['expire']);
  await expect.poll(() => receiver!.of('decision.expired', decisionId).length, { timeout: 15_000 }).toBe(1);
  const metrics = String((await call(url, 'GET', '/metrics')).body);
  expect(metrics).toMatch(/^arbiter_pending_decisions 0$/m);
  expect(metrics).toMatch(/^arbiter_decisions_expired_total 1$/m);
}

async function headSeq(url: string): Promise<number> {
  return (await entries(url)).at(-1)!.seq;
}

interface Scenario {
  /** The server's flags besides the ones every run here takes. */
  flags: string[];
  /** The data folders of the first and the restarted server (the same for the file log). */
  dataDirs: [string, string];
  /** Archives everything checkpointed so far, as the user would. */
  archive(url: string): Promise<{ archive: { to_seq: number } | null; message: string }>;
}

/**
 * A decision waits for review behind a checkpoint; everything is archived; the server
 * restarts with one capability changed. The decision stays reviewable and later expires;
 * only the change is recorded again.
 */
async function archiveAndRestart(scenario: Scenario): Promise<void> {
  receiver = await Receiver.onFreePort();
  await receiver.up();
  const manifestsDir = await tempManifests();
  cleanups.push(...[manifestsDir, ...scenario.dataDirs].map((dir) => () => removeDir(dir)));
  const flags = [
    ...scenario.flags,
    '--checkpoint-entries',
    '5',
    '--pending-ttl',
    String(PENDING_TTL_SECONDS),
    '--notify-url',
    receiver.url,
  ];
  const first = await start({ dataDir: scenario.dataDirs[0], manifestsDir }, flags);
  const waiting = await decisionWaitingBehindCheckpoint(first.url);

  const { archive, message } = await scenario.archive(first.url);
  // The configuration's entries are archived; the waiting decision is not, and the answer says why.
  expect(archive?.to_seq).toBeLessThan(waiting.seq);
  expect(message).toContain(`decision ${waiting.id}`);
  await expectReviewable(first.url, waiting.id);
  const headBefore = await headSeq(first.url);
  await stop(first);

  await changeOneCapability(manifestsDir);
  const second = await start({ dataDir: scenario.dataDirs[1], manifestsDir }, flags);
  await expectOnlyTheChangeRecorded(second.url, headBefore);
  await expectReviewable(second.url, waiting.id);
  await expectExpiry(second.url, waiting.id);
}

describe('what archiving keeps: decisions waiting for review, and what the configuration auditor knows', () => {
  it(
    'file log, archived through the API, restarted on the same data folder',
    async () => {
      const dataDir = await tempDir();
      await archiveAndRestart({
        flags: [],
        dataDirs: [dataDir, dataDir],
        archive: async (url) => {
          const archived = await call(url, 'POST', '/api/v1/audit/archive', {
            key: KEYS.admin,
            body: { before: new Date().toISOString() },
          });
          expect(archived.status).toBe(200);
          return archived.body as { archive: { to_seq: number } | null; message: string };
        },
      });
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'Redis, archived with the CLI while a replica serves, then a new replica on the same Redis',
    async () => {
      const redis = await startRedisServer();
      cleanups.push(() => redis.dispose());
      const dataDirs: [string, string] = [await tempDir(), await tempDir()];
      await archiveAndRestart({
        flags: ['--redis', `${redis.url}/0`],
        dataDirs,
        archive: async () => {
          const cli = await runArbiter([
            'audit',
            'archive',
            '--redis',
            `${redis.url}/0`,
            '--data-dir',
            dataDirs[0],
            '--before',
            new Date().toISOString(),
            '--out',
            `${dataDirs[0]}/archives/`,
          ]);
          expect(cli.code, cli.stderr).toBe(0);
          return JSON.parse(cli.stdout) as { archive: { to_seq: number } | null; message: string };
        },
      });
    },
    TEST_TIMEOUT_MS,
  );
});
