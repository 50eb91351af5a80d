import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AuditEntry, Checkpoint } from '../audit-log.js';
import { sealEntry } from '../chain.js';
import { openLogFile, type LogFile } from './log-file.js';
import { RangeVerifier } from './range-verifier.js';
import { event, recordingLogger, tempDir, writeIndexedLines, type Logged } from './test-fixtures.js';

let dir: string;
let cleanup: () => Promise<void>;
let opened: LogFile | undefined;
beforeEach(async () => ({ dir, cleanup } = await tempDir()));
afterEach(async () => {
  await opened?.close();
  opened = undefined;
  await cleanup();
});

/** n chained entries; from `rewriteFrom` on they are sealed again with another outcome. */
function chain(n: number, rewriteFrom = Infinity): AuditEntry[] {
  const entries: AuditEntry[] = [];
  let previous: AuditEntry | null = null;
  for (let seq = 1; seq <= n; seq += 1) {
    const outcome = seq >= rewriteFrom ? 'DENY' : 'ALLOW';
    previous = sealEntry({ id: `aud_${seq}`, ...event({ decision_id: `dec-${seq}`, outcome }) }, previous);
    entries.push(previous);
  }
  return entries;
}

function checkpointAt(entry: AuditEntry): Checkpoint {
  return { seq: entry.seq, hash: entry.hash, entry_id: entry.id, time: '2025-01-01T00:00:00.000Z' };
}

/** A verifier over the entries written to a real file, with every written entry indexed. */
async function verifierOver(
  written: AuditEntry[],
  checkpoints: Checkpoint[] = [],
): Promise<{ verifier: RangeVerifier; logged: Logged[] }> {
  const path = join(dir, 'audit.log');
  const index = await writeIndexedLines(path, written);
  opened = await openLogFile(path);
  const { logged, logger } = recordingLogger();
  const verifier = new RangeVerifier({
    file: opened,
    index,
    checkpoints: () => Promise.resolve(checkpoints),
    now: () => new Date(0),
    cacheMs: 0,
    logger,
  });
  return { verifier, logged };
}

function chainBreakWarning(found: unknown): Logged {
  return {
    level: 'warn',
    details: { break: found },
    message: 'audit chain break found while checking an entry',
  };
}

describe('RangeVerifier', () => {
  it('verifies a range longer than one read (1,000 entries) from genesis', async () => {
    const entries = chain(2_500);
    const { verifier, logged } = await verifierOver(entries);
    expect(await verifier.isVerified(1_001, 2_500)).toBe(true);
    expect(await verifier.isVerified(2_500, 2_500)).toBe(true);
    expect(logged).toEqual([]);
  });

  it('from a checkpoint, the checkpointed entry must itself hash to the checkpoint', async () => {
    // Entries 3..5 were sealed again after the checkpoint of the original entry 3: each is
    // consistent with its own hash and link, and only the checkpoint tells the rewrite.
    const original = chain(5);
    const { verifier, logged } = await verifierOver(chain(5, 3), [checkpointAt(original[2]!)]);
    expect(await verifier.isVerified(2, 5)).toBe(true);
    expect(await verifier.isVerified(3, 5)).toBe(false);
    expect(await verifier.isVerified(4, 5)).toBe(false);
    expect(logged).toEqual([chainBreakWarning(expect.objectContaining({ seq: 3 }) as unknown)]);
  });

  it('never calls a seq verified that it did not read: one past the entries indexed is a break', async () => {
    const { verifier, logged } = await verifierOver(chain(3));
    expect(await verifier.isVerified(5, 5)).toBe(false);
    expect(logged).toEqual([chainBreakWarning({ seq: 5, reason: 'entry 5 was not found where expected' })]);
    expect(await verifier.isVerified(3, 5)).toBe(true);
  });
});
