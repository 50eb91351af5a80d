import { spawn } from 'node:child_process';
import { cp, readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../src/audit/audit-log.js';
import { FileAuditLog } from '../../src/audit/file/index.js';
import { event } from '../../src/audit/file/test-fixtures.js';
import { CLI, REPO, startArbiter } from '../support/arbiter-process.js';
import { runArbiter, useFixtureDir } from './support/cli-run.js';

const START = Date.UTC(2026, 0, 1);
const MINUTE = 60_000;

/** A data folder as arbiter serve leaves it: `count` entries a minute apart, a checkpoint every 100. */
async function makeDataDir(dir: string, count: number, padding = 0): Promise<void> {
  let clock = START;
  const log = await FileAuditLog.open({
    dir,
    checkpointEvery: { entries: 100, seconds: 3600 },
    retainCheckpoints: 100,
    now: () => new Date(clock),
  });
  const pad = 'x'.repeat(padding);
  for (let i = 1; i <= count; i += 1) {
    clock = START + i * MINUTE;
    const append = log.append({
      event_type: 'governance.decision',
      timestamp: new Date(clock).toISOString(),
      actor_id: `agent-${i % 3}`,
      capability: 'db.read',
      outcome: 'ALLOW',
      risk_score: 0.2,
      decision_id: `dec-${i}`,
      policies_evaluated: [],
      policy_matched: null,
      data: { i, pad },
    });
    // Each checkpoint is taken before the clock moves on, so its time is that of its entry.
    if (i % 100 === 0 || i === count) {
      await append;
      while (((await log.checkpoints()).at(-1)?.seq ?? 0) < Math.floor(i / 100) * 100) {
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
    }
  }
  await log.close();
}

async function entriesOf(path: string): Promise<AuditEntry[]> {
  const text = await readFile(path, 'utf8');
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as AuditEntry);
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/** Minute m's time: entries up to seq m were written by then (checkpoints too, a moment after). */
const minute = (m: number): string => new Date(START + m * MINUTE + 1).toISOString();

describe('arbiter audit archive', () => {
  const fixtures = useFixtureDir('arbiter-archive-');

  it('archives, is killed after writing the archive, and a rerun finishes: nothing lost, all verifies', async () => {
    const data = fixtures.path('written');
    await makeDataDir(data, 450);
    const logBefore = await readFile(join(data, 'audit.jsonl'), 'utf8');
    const out = fixtures.path('written-out/');
    const args = ['audit', 'archive', '--data-dir', data, '--before', minute(350), '--out', out];

    const killed = await runArbiter(args, { ARBITER_ARCHIVE_CRASH_AFTER: 'written' });
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    expect(killed.stderr).toContain('written: audit-000000000001-000000000300.jsonl (seq 1..300)');
    // The archive is complete; the log and its anchor are untouched.
    expect(await readFile(join(data, 'audit.jsonl'), 'utf8')).toBe(logBefore);
    expect(await exists(join(data, 'retention.json'))).toBe(false);

    const rerun = await runArbiter(args);
    expect(rerun.stderr).toMatch(/archived seq 1\.\.300 \(300 entries\)/);
    expect(rerun.code).toBe(0);
    const result = JSON.parse(rerun.stdout) as {
      archive: { file: string; sha256: string };
      retained: unknown;
    };
    expect(result.retained).toMatchObject({
      from_seq: 301,
      anchor: { seq: 300, archive: result.archive.file },
    });
    const archive = join(out, result.archive.file);
    expect((await entriesOf(archive)).map((e) => e.seq)).toEqual(
      Array.from({ length: 300 }, (_, i) => i + 1),
    );
    const retained = await entriesOf(join(data, 'audit.jsonl'));
    expect(retained[0]!.seq).toBe(301);
    expect(retained.at(-1)).toMatchObject({
      event_type: 'audit.archived',
      actor_id: 'arbiter audit archive',
    });

    // The archive verifies on its own, and with the retained log as one chain from genesis.
    const alone = await runArbiter(['audit', 'verify', archive]);
    expect(alone.stderr).toBe('verified: 300 entries, head seq 300\n');
    const both = await runArbiter(['audit', 'verify', archive, join(data, 'audit.jsonl')]);
    expect(both.stderr).toBe('verified: 451 entries, head seq 451\n');
    expect(JSON.parse(both.stdout).start.trusted).toBe('genesis');
  });

  it('is killed after trimming, and a rerun records the run it could not record', async () => {
    const data = fixtures.path('trimmed');
    await makeDataDir(data, 250);
    const args = [
      'audit',
      'archive',
      '--data-dir',
      data,
      '--before',
      minute(230),
      '--out',
      fixtures.path('t.jsonl'),
    ];
    const killed = await runArbiter(args, { ARBITER_ARCHIVE_CRASH_AFTER: 'trimmed' });
    expect(killed.signal).toBe('SIGKILL');
    expect((await entriesOf(join(data, 'audit.jsonl')))[0]!.seq).toBe(201);

    const rerun = await runArbiter(args);
    expect(rerun.code).toBe(0);
    expect(rerun.stderr).toMatch(/nothing to archive.*the log now holds seq 201 on/);
    const recorded = (await entriesOf(join(data, 'audit.jsonl'))).filter(
      (e) => e.event_type === 'audit.archived',
    );
    expect(recorded).toHaveLength(1);
    expect(recorded[0]!.data).toMatchObject({ file: 't.jsonl', to_seq: 200 });
    const again = await runArbiter(args);
    expect(again.code).toBe(0);
    expect(
      (await entriesOf(join(data, 'audit.jsonl'))).filter((e) => e.event_type === 'audit.archived'),
    ).toHaveLength(1);
  });

  it('killed while it cuts the log, loses nothing, and a rerun finishes', async () => {
    const source = fixtures.path('cut-source');
    await makeDataDir(source, 6000, 2000);
    const original = await entriesOf(join(source, 'audit.jsonl'));
    // Killed once the anchor is recorded (before the cut), then twice once the copy began.
    for (const [attempt, sign] of ['retention.json', 'audit.jsonl.trim', 'audit.jsonl.trim'].entries()) {
      const data = fixtures.path(`cut-${attempt}`);
      await cp(source, data, { recursive: true });
      const archive = fixtures.path(`cut-${attempt}.jsonl`);
      const args = ['audit', 'archive', '--data-dir', data, '--before', minute(5950), '--out', archive];
      const child = spawn(process.execPath, [CLI, ...args], { cwd: REPO, stdio: 'ignore' });
      const exited = new Promise((resolve) => child.once('exit', resolve));
      while (!(await exists(join(data, sign))) && child.exitCode === null) {
        await new Promise((resolve) => setImmediate(resolve));
      }
      child.kill('SIGKILL');
      await exited;

      // Whatever moment it hit: every entry is in the archive or still in the log.
      const archived = await entriesOf(archive);
      const kept = await entriesOf(join(data, 'audit.jsonl'));
      const seqs = new Set([...archived, ...kept].map((e) => e.seq));
      expect(original.every((e) => seqs.has(e.seq))).toBe(true);

      const rerun = await runArbiter(args);
      expect(rerun.code).toBe(0);
      const after = await entriesOf(join(data, 'audit.jsonl'));
      expect(after[0]!.seq).toBe(5901);
      const verified = await runArbiter(['audit', 'verify', archive, join(data, 'audit.jsonl')]);
      expect(verified.code).toBe(0);
      expect(verified.stderr).toMatch(/^verified: 600\d entries/);
      expect(await readdir(data)).not.toContain('audit.jsonl.trim');
    }
  });

  it('refuses while arbiter serve holds the log, naming the process', async () => {
    const data = fixtures.path('served');
    await makeDataDir(data, 120);
    const server = await startArbiter({ dataDir: data });
    try {
      const result = await runArbiter([
        'audit',
        'archive',
        '--data-dir',
        data,
        '--before',
        minute(200),
        '--out',
        fixtures.path('s.jsonl'),
      ]);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(
        /in use by process \d+ \(a running arbiter serve\?\).*POST \/api\/v1\/audit\/archive/,
      );
    } finally {
      await server.stop();
    }
    expect(await exists(fixtures.path('s.jsonl'))).toBe(false);
  });

  it("keeps a decision waiting for review, as far back as the server's --pending-ttl reaches", async () => {
    // Nine days ago: ten decisions, the third waiting for review (a 10-day TTL), a checkpoint after them.
    const data = fixtures.path('waiting');
    const then = Date.now() - 9 * 86_400_000;
    const log = await FileAuditLog.open({
      dir: data,
      checkpointEvery: { entries: 5, seconds: 3600 },
      retainCheckpoints: 10,
      now: () => new Date(then),
    });
    for (let i = 1; i <= 10; i += 1) {
      const escalated = i === 3;
      await log.append(
        event({
          timestamp: new Date(then).toISOString(),
          decision_id: `dec-${i}`,
          outcome: escalated ? 'ESCALATE' : 'ALLOW',
          data: escalated ? { expires_at: new Date(then + 10 * 86_400_000).toISOString() } : {},
        }),
      );
    }
    while (((await log.checkpoints()).at(-1)?.seq ?? 0) < 10) await new Promise((r) => setTimeout(r, 5));
    await log.close();
    const args = (ttl: string[]) => [
      'audit',
      'archive',
      '--data-dir',
      data,
      '--before',
      new Date().toISOString(),
      '--out',
      `${data}-out/`,
      ...ttl,
    ];

    const kept = await runArbiter(args(['--pending-ttl', String(10 * 86_400)]));
    expect(kept.code, kept.stderr).toBe(0);
    expect(JSON.parse(kept.stdout)).toMatchObject({
      archive: null,
      kept: { seq: 3, reason: expect.stringMatching(/^decision dec-3 waits for review \(until /) },
    });
    // By default the server looks back a week only: it would never expire it, nor does this keep it.
    const archived = await runArbiter(args([]));
    expect(archived.code, archived.stderr).toBe(0);
    expect(JSON.parse(archived.stdout)).toMatchObject({ archive: { from_seq: 1, to_seq: 10 } });
  });

  it('says what it needs', async () => {
    const result = await runArbiter(['audit', 'archive', '--out', 'x.jsonl']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--before TIME \(ISO 8601\) is required/);
    const help = await runArbiter(['audit', 'archive', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/Killed at any point, nothing is lost/);
  });
});
