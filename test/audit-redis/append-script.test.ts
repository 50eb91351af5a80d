import { describe, expect, it } from 'vitest';
import { APPEND_SCRIPT } from '../../src/audit/redis/append-scripts.js';
import { GENESIS_HASH, sealForStorage } from '../../src/audit/chain.js';
import { openRedisAuditLog, RedisAuditKeys } from '../../src/audit/redis/index.js';
import { LuaScript } from '../../src/redis/lua-script.js';
import { decisionEvent } from './support/events.js';
import { useRedisSuite } from './support/redis-suite.js';

const APPEND = new LuaScript(APPEND_SCRIPT);

describe('Redis audit log: the append script', () => {
  const suite = useRedisSuite();

  /** The script's arguments for a batch of sealed entries on an empty chain, without tree records. */
  function batchOf(keys: RedisAuditKeys, count: number) {
    let previous: { seq: number; hash: string } | null = null;
    const sealed = Array.from({ length: count }, (_, i) => {
      const next = sealForStorage(decisionEvent(i, { data: { note: `é€𝄞 ${i}` } }), `e-${i}`, previous);
      previous = next.entry;
      return next;
    });
    const keyList = [
      keys.head,
      keys.stream,
      keys.ids,
      keys.time,
      keys.cancelled('batch-1'),
      keys.timeFloor,
      keys.timeCeiling,
      keys.treeChunk(0),
      keys.treeChunk(0),
      // One equality index key: the second entry's decision.
      keys.index('decision_id', sealed[1]!.entry.decision_id!),
    ];
    const args = (entries: { ids: string; stored: Buffer; lengths: string; times: string }) => [
      0,
      GENESIS_HASH,
      Date.now() + 60_000,
      0,
      'writer-1',
      count,
      sealed.at(-1)!.entry.hash,
      '',
      '',
      0,
      '',
      entries.ids,
      entries.stored,
      entries.lengths,
      entries.times,
      '2',
    ];
    const packed = {
      ids: sealed.map((s) => s.entry.id).join(' '),
      stored: Buffer.concat(sealed.map((s) => s.stored)),
      lengths: sealed.map((s) => s.stored.length).join(' '),
      times: sealed.map((s) => Date.parse(s.entry.timestamp)).join(' '),
    };
    return { sealed, keyList, args, packed };
  }

  it('stores each entry of the packed batch byte for byte, multi-byte characters included', async () => {
    const keys = new RedisAuditKeys('script-ok:{audit}');
    const { sealed, keyList, args, packed } = batchOf(keys, 3);
    const reply = (await APPEND.run(suite.admin(), keyList, args(packed))) as string[];
    expect(reply[0]).toBe('ok');
    const items = await suite.admin().xrangeBuffer(keys.stream, '-', '+');
    items.forEach(([, fields], i) => expect(fields[1]!.equals(sealed[i]!.stored)).toBe(true));
    const log = suite.track(await openRedisAuditLog({ redis: suite.url(), keyPrefix: 'script-ok:{audit}' }));
    expect(await log.verify()).toMatchObject({ ok: true, entries_checked: 3 });
    expect((await log.byDecision(sealed[1]!.entry.decision_id!)).map((e) => e.id)).toEqual(['e-1']);
  });

  it('refuses a batch whose parts do not add up, and writes nothing', async () => {
    const keys = new RedisAuditKeys('script-malformed:{audit}');
    const { keyList, args, packed } = batchOf(keys, 3);
    const broken = [
      { ...packed, ids: packed.ids.split(' ').slice(1).join(' ') },
      { ...packed, lengths: packed.lengths.replace(/^\d+/, (n) => String(Number(n) - 1)) },
      { ...packed, stored: packed.stored.subarray(0, packed.stored.length - 1) },
      { ...packed, times: '' },
    ];
    for (const parts of broken) {
      await expect(APPEND.run(suite.admin(), keyList, args(parts))).rejects.toThrow('malformed audit batch');
    }
    expect(await suite.admin().exists(keys.stream, keys.head, keys.ids, keys.time)).toBe(0);
  });
});
