import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { archiveAuditLog } from '../audit/archiving/audit-archiver.js';
import type { AuditEntry } from '../audit/audit-log.js';
import type { FileAuditLog } from '../audit/file/file-audit-log.js';
import { event, openLog, tempDir } from '../audit/file/test-fixtures.js';
import { systemEvent } from '../audit/system-event.js';
import { API_VERSION, type CapabilityObject } from '../model/index.js';
import { governanceKeepers } from './archive-keepers.js';
import { type ConfigSnapshotData, readAuditedConfiguration } from './audited-configuration.js';
import { ConfigAuditor } from './config-auditor.js';

const capability = (i: number, description = `capability ${i}`): CapabilityObject => ({
  apiVersion: API_VERSION,
  kind: 'Capability',
  metadata: { name: `cap-${i}` },
  spec: { name: `svc${i}.act`, riskLevel: 'low', description },
});

let dir: string;
let cleanup: () => Promise<void>;
let clock: Date;
let log: FileAuditLog;
beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
  clock = new Date('2026-11-23T12:00:00.000Z');
  // A checkpoint at every entry, taken at `clock`: a test chooses the cut by the time.
  log = await openLog(join(dir, 'log'), { checkpointEvery: { entries: 1, seconds: 3600 }, now: () => clock });
});
afterEach(async () => {
  await log.close();
  await cleanup();
});

/** Waits until the checkpoint of the head is taken, so that it carries the current clock. */
async function checkpointed(): Promise<void> {
  const head = await log.head();
  for (let i = 0; i < 500 && (await log.checkpoints()).at(-1)?.seq !== head.seq; i += 1) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

async function decisions(count: number): Promise<void> {
  for (let i = 0; i < count; i += 1) await log.append(event({ timestamp: clock.toISOString() }));
  await checkpointed();
}

async function record(objects: CapabilityObject[]): Promise<number> {
  const auditor = new ConfigAuditor(log, () => clock);
  await auditor.restore();
  const recorded = await auditor.record(objects, 'manifests');
  await checkpointed();
  return recorded;
}

/** Archives every entry checkpointed before `before`, carrying the configuration over. */
async function archive(before: Date, file: string) {
  const result = await archiveAuditLog(log, {
    before,
    actor: 'admin',
    path: () => join(dir, file),
    now: () => clock,
    // Nothing waits for review in these logs: only the configuration is carried over.
    keepers: governanceKeepers(log, () => clock, 600),
  });
  await checkpointed();
  return result;
}

async function snapshotEntries(): Promise<AuditEntry[]> {
  return (await log.query({ event_type: 'config.snapshot', order: 'asc', limit: 100 })).entries;
}

const later = (minutes: number) => new Date(clock.getTime() + minutes * 60_000);

describe('the audited configuration across archiving', () => {
  it('is carried past the cut: restored from what is retained, it knows every object, and changes after it apply', async () => {
    const objects = [capability(0), capability(1), capability(2)];
    expect(await record(objects)).toBe(3);
    await decisions(2);
    clock = later(1);
    const result = await archive(clock, 'a.jsonl');
    expect(result.archive).toMatchObject({ from_seq: 1, to_seq: 5 });

    const [snapshot] = await snapshotEntries();
    expect(snapshot).toMatchObject({
      seq: 6,
      actor_id: 'admin',
      timestamp: clock.toISOString(),
      decision_id: null,
      data: { as_of_seq: 5, archived_to_seq: 5, part: 1, parts: 1 },
    });
    expect((snapshot!.data as unknown as ConfigSnapshotData).objects).toEqual(objects);
    // Nothing of the configuration's own events is retained: the snapshot alone tells it.
    expect(await record(objects)).toBe(0);

    // Changed, deleted, created after the snapshot: restored on top of it.
    const next = [capability(1, 'changed'), capability(2), capability(3)];
    expect(await record(next)).toBe(3);
    const restored = await readAuditedConfiguration(log);
    expect(restored.snapshotAsOf).toBe(5);
    expect([...restored.objects.values()]).toEqual(expect.arrayContaining(next));
    expect(restored.objects.size).toBe(3);
  });

  it('is split in parts; a snapshot a killed run left incomplete does not count', async () => {
    // About 300 KB of objects: two parts of at most 256 KB.
    const big = Array.from({ length: 30 }, (_, i) => capability(i, 'x'.repeat(10_000)));
    expect(await record(big)).toBe(30);
    clock = later(1);
    await archive(clock, 'a.jsonl');
    const parts = await snapshotEntries();
    expect(parts.map((e) => e.data.part)).toEqual([1, 2]);
    expect(parts.every((e) => e.data.parts === 2 && e.data.snapshot_id === parts[0]!.data.snapshot_id)).toBe(
      true,
    );
    for (const part of parts) expect(JSON.stringify(part.data).length).toBeLessThan(300_000);

    // A newer snapshot of which only part 1 of 2 was written: the complete one stands.
    const incomplete: ConfigSnapshotData = {
      snapshot_id: 'killed-run',
      as_of_seq: (await log.head()).seq,
      archived_to_seq: 0,
      part: 1,
      parts: 2,
      objects: [],
    };
    await log.append(systemEvent('config.snapshot', clock.toISOString(), 'admin', { ...incomplete }));
    const restored = await readAuditedConfiguration(log);
    expect(restored.snapshotAsOf).toBe(parts[0]!.data.as_of_seq);
    expect(restored.objects.size).toBe(30);
  });

  it('is not written again while the newest snapshot is past the cut, nor for a log without configuration', async () => {
    await decisions(3);
    clock = later(1);
    expect((await archive(clock, 'a.jsonl')).archive).toMatchObject({ to_seq: 3 });
    expect(await snapshotEntries()).toEqual([]);

    expect(await record([capability(0)])).toBe(1);
    const firstCut = later(1);
    clock = later(2);
    // Entries after the cut's checkpoint, before the carry: the snapshot is as of them.
    await decisions(2);
    const secondCut = later(1);
    clock = later(2);
    await archive(firstCut, 'b.jsonl');
    const [first] = await snapshotEntries();
    expect(first!.data).toMatchObject({ as_of_seq: 7, archived_to_seq: 5 });

    // The next cut (at seq 7) is not past the snapshot's as_of_seq: it is kept as it is.
    expect((await archive(secondCut, 'c.jsonl')).archive).toMatchObject({ from_seq: 6, to_seq: 7 });
    expect((await snapshotEntries()).map((e) => e.seq)).toEqual([first!.seq]);
    expect(await record([capability(0)])).toBe(0);
  });
});
