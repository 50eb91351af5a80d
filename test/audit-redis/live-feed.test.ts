import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../src/audit/audit-log.js';
import { sealForStorage } from '../../src/audit/chain.js';
import { openRedisAuditLog } from '../../src/audit/redis/index.js';
import { StreamTail } from '../../src/audit/redis/stream-tail.js';
import { decisionEvent } from './support/events.js';
import { useRedisSuite } from './support/redis-suite.js';

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

describe('Redis audit log: the live feed', () => {
  const suite = useRedisSuite();

  it("hands on this replica's own entries as appended, and other replicas' as stored", async () => {
    const log = suite.track(await openRedisAuditLog({ redis: suite.url(), keyPrefix: 'feed-own:{audit}' }));
    const other = suite.track(await openRedisAuditLog({ redis: suite.url(), keyPrefix: 'feed-own:{audit}' }));
    const seen: AuditEntry[] = [];
    log.subscribe((entry) => seen.push(entry));
    const mine = await Promise.all([1, 2, 3].map((n) => log.append(decisionEvent(n))));
    const theirs = await other.append(decisionEvent(4));
    await expect.poll(() => seen.length).toBe(4);
    // The very objects append resolved with: the feed compared the bytes, it did not parse them.
    for (const [i, entry] of mine.entries()) expect(seen[i]).toBe(entry);
    expect(seen[3]).not.toBe(theirs);
    expect(seen[3]).toEqual(theirs);
    const stored = await log.query({ order: 'asc', limit: 10 });
    expect(seen).toEqual(stored.entries);
  });

  it('parses what is stored at a seq when it is not the entry this replica sealed for it (a lost race, a failover)', async () => {
    const stream = 'feed-race:stream';
    const tail = new StreamTail(
      () => new Redis(suite.url()),
      stream,
      quiet,
      () => Promise.resolve('0-0'),
    );
    const seen: AuditEntry[] = [];
    const stop = tail.subscribe((entry) => seen.push(entry));
    try {
      const sealedHere = sealForStorage(decisionEvent(1), 'mine-1', null);
      const storedThere = sealForStorage(decisionEvent(2), 'theirs-1', null);
      tail.expect([sealedHere]);
      await suite.admin().xadd(stream, '1-0', 'entry', storedThere.stored);
      await expect.poll(() => seen.length).toBe(1);
      expect(seen[0]).toEqual(storedThere.entry);

      // The next seq as sealed here: handed on as it is.
      const next = sealForStorage(decisionEvent(3), 'mine-2', storedThere.entry);
      tail.expect([next]);
      await suite.admin().xadd(stream, '2-0', 'entry', next.stored);
      await expect.poll(() => seen.length).toBe(2);
      expect(seen[1]).toBe(next.entry);

      // Bytes that differ by one character at the expected seq are not the expected entry.
      const third = sealForStorage(decisionEvent(4), 'mine-3', next.entry);
      tail.expect([third]);
      const altered = Buffer.from(third.stored);
      altered[altered.indexOf('"seq":3') + 6] = '4'.charCodeAt(0);
      await suite.admin().xadd(stream, '3-0', 'entry', altered);
      await expect.poll(() => seen.length).toBe(3);
      expect(seen[2]).not.toBe(third.entry);
      expect(seen[2]!.seq).toBe(4);
    } finally {
      stop();
      await tail.stop();
    }
  });

  it('follows the stream across a Redis restart', async () => {
    const prefix = 'feed-restart:{audit}';
    const log = suite.track(await openRedisAuditLog({ redis: suite.url(), keyPrefix: prefix }));
    const seen: AuditEntry[] = [];
    log.subscribe((entry) => seen.push(entry));
    await log.append(decisionEvent(1));
    await expect.poll(() => seen.length).toBe(1);
    // The feed's read is in flight when Redis goes.
    await suite.server().stop();
    await suite.server().restart();
    const other = suite.track(await openRedisAuditLog({ redis: suite.url(), keyPrefix: prefix }));
    await other.append(decisionEvent(2));
    await expect.poll(() => seen.map((entry) => entry.seq), { timeout: 5000 }).toEqual([1, 2]);
  });
});
