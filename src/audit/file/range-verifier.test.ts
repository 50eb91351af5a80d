import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AuditEntry, ChainHead, Checkpoint } from '../audit-log.js';
import { openLogFile, type LogFile } from './log-file.js';
import { RangeVerifier } from './range-verifier.js';
import { recordingLogger, sealedChain, tempDir, writeIndexedLines, type Logged } from './test-fixtures.js';

let dir: string;
let cleanup: () => Promise<void>;
let opened: LogFile | undefined;
beforeEach(async () => ({ dir, cleanup } = await tempDir()));
afterEach(async () => {
  await opened?.close();
  opened = undefined;
  await cleanup();
});

/** n chained entries; from `rewriteFrom` on they are sealed again with another actor (same line lengths). */
function chain(n: number, rewriteFrom = Infinity): AuditEntry[] {
  return sealedChain(n, (seq) => ({
    decision_id: `dec-${seq}`,
    actor_id: seq >= rewriteFrom ? 'agent-2' : 'agent-1',
  }));
}

function checkpointAt(entry: AuditEntry): Checkpoint {
  return { seq: entry.seq, hash: entry.hash, entry_id: entry.id, time: '2025-01-01T00:00:00.000Z' };
}

const logPath = (): string => join(dir, 'audit.log');

/**
 * A verifier over the entries written to a real file, with every written entry indexed;
 * the clock reads `clock.ms`, and verified ranges are trusted for `cacheMs` (none by default).
 */
async function verifierOver(
  written: AuditEntry[],
  checkpoints: Checkpoint[] = [],
  options: { cacheMs?: number; clock?: { ms: number }; anchor?: ChainHead } = {},
): Promise<{ verifier: RangeVerifier; logged: Logged[] }> {
  const index = await writeIndexedLines(logPath(), written);
  opened = await openLogFile(logPath());
  const { logged, logger } = recordingLogger();
  const clock = options.clock ?? { ms: 0 };
  const verifier = new RangeVerifier({
    file: opened,
    index,
    checkpoints: () => Promise.resolve(checkpoints),
    now: () => new Date(clock.ms),
    cacheMs: options.cacheMs ?? 0,
    logger,
    ...(options.anchor ? { anchor: options.anchor } : {}),
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

  it('refuses a seq past the head it is given, even when the file already holds it', async () => {
    const { verifier, logged } = await verifierOver(chain(5));
    expect(await verifier.isVerified(5, 4)).toBe(false);
    expect(await verifier.isVerified(4, 4)).toBe(true);
    expect(logged).toEqual([]);
  });

  it('refuses the seq of a break a full verification found, and every later one, but not the one before', async () => {
    const { verifier, logged } = await verifierOver(chain(5));
    verifier.setKnownBreak(3);
    expect(await verifier.isVerified(3, 5)).toBe(false);
    expect(await verifier.isVerified(4, 5)).toBe(false);
    expect(await verifier.isVerified(2, 5)).toBe(true);
    expect(logged).toEqual([]);
  });

  it('remembers the earlier of a known break and one it finds: seqs from it on are refused without reading again', async () => {
    // Entry 3 was altered in place (same length): entry 4 no longer links to it.
    const tampered = chain(5).map((e, i) => (i === 2 ? chain(5, 3)[2]! : e));
    const { verifier, logged } = await verifierOver(tampered);
    verifier.setKnownBreak(5);
    expect(await verifier.isVerified(4, 5)).toBe(false);
    expect(await verifier.isVerified(4, 5)).toBe(false);
    expect(logged).toEqual([chainBreakWarning(expect.objectContaining({ seq: 4 }) as unknown)]);
    // The altered entry 3 is consistent with itself and its link: only entry 4 breaks.
    expect(await verifier.isVerified(3, 5)).toBe(true);
  });

  it('trusts a verified range for cacheMs, then reads it again and sees an entry altered since', async () => {
    const clock = { ms: 10_000 };
    const original = chain(5);
    const { verifier, logged } = await verifierOver(original, [], { cacheMs: 1_000, clock });
    expect(await verifier.isVerified(5, 5)).toBe(true);
    // Entry 3 is altered in place (same length) after the check.
    await writeIndexedLines(
      logPath(),
      original.map((e, i) => (i === 2 ? chain(5, 3)[2]! : e)),
    );
    clock.ms += 999;
    expect(await verifier.isVerified(5, 5)).toBe(true);
    expect(logged).toEqual([]);
    clock.ms += 1;
    expect(await verifier.isVerified(5, 5)).toBe(false);
    expect(logged).toEqual([chainBreakWarning(expect.objectContaining({ seq: 4 }) as unknown)]);
  });

  it('starts after the retention anchor, ignoring checkpoints of archived entries (at or before it)', async () => {
    const entries = chain(6);
    const anchor = { seq: 3, hash: entries[2]!.hash };
    const { verifier, logged } = await verifierOver(
      entries.slice(3),
      [checkpointAt(entries[1]!), checkpointAt(entries[2]!)],
      {
        anchor,
      },
    );
    expect(await verifier.isVerified(3, 6)).toBe(false);
    expect(await verifier.isVerified(5, 6)).toBe(true);
    expect(await verifier.isVerified(6, 6)).toBe(true);
    expect(logged).toEqual([]);
  });

  it('calls a check a break when its first entry is missing from the file', async () => {
    // The file lost its first entries, and no anchor says they were archived.
    const { verifier, logged } = await verifierOver(chain(5).slice(2));
    expect(await verifier.isVerified(4, 5)).toBe(false);
    expect(logged).toEqual([chainBreakWarning({ seq: 1, reason: 'entry 1 is missing from the file' })]);
  });
});
