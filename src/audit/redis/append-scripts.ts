import { GENESIS_HASH } from '../chain.js';

/** How long the last loser of a head race holds the next turn (ms of Redis's clock). */
export const TURN_MS = 250;
/** A writer gets the next turn once it has lost this many races in a row for one batch. */
export const TURN_AFTER_LOSSES = 3;

/**
 * Compare-and-append of one sealed batch, atomic in Redis.
 *
 * KEYS: 1 head, 2 stream, 3 ids, 4 time index, 5 cancel tombstone of this batch,
 *       6 prefix-max time records, 7 suffix-min time records,
 *       8.. the equality index keys of each entry, in entry order.
 * ARGV: 1 expected head seq, 2 expected head hash, 3 deadline in Redis-clock ms,
 *       4 entry count, then per entry: id, entry JSON, hash, timestamp ms, number of index keys,
 *       last: the attempt number of this batch (1 for the first try).
 * The head hash also holds `turn`/`turn_until`: the batch that lost the last race and may
 * append next (see the script).
 * Reply: {'ok', last seq} | {'conflict', head seq, head hash[, 'turn']} | {'landed', first seq}
 *        | {'cancelled'} | {'expired'} | {'headless'}.
 *
 * The deadline makes a call that reached Redis after its caller timed out (a slow or
 * blocked server) refuse to write, so a rejected append does not land later.
 *
 * All checks run before the first write, and only the first XADD of a batch can fail
 * (later ids are larger), so an error reply means nothing was written.
 */
export const APPEND_SCRIPT = `
if redis.call('EXISTS', KEYS[5]) == 1 then return {'cancelled'} end
local landed = redis.call('HGET', KEYS[3], ARGV[5])
if landed then return {'landed', landed} end
local head = redis.call('HMGET', KEYS[1], 'seq', 'hash', 'turn', 'turn_until')
if not head[1] and redis.call('XLEN', KEYS[2]) > 0 then return {'headless'} end
local seq = tonumber(head[1] or '0')
local hash = head[2] or '${GENESIS_HASH}'
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
-- Fairness: the last writer to lose the race holds the next turn for a moment, so a
-- writer that keeps winning (it alone knows the head without a round trip) cannot starve
-- the others. KEYS[5] names the batch, so it identifies the writer's attempt.
local heldByOther = head[3] and head[3] ~= KEYS[5] and tonumber(head[4]) > now
if seq ~= tonumber(ARGV[1]) or hash ~= ARGV[2] or heldByOther then
  if not heldByOther and tonumber(ARGV[#ARGV]) >= ${TURN_AFTER_LOSSES} then
    redis.call('HSET', KEYS[1], 'turn', KEYS[5], 'turn_until', now + ${TURN_MS})
    return {'conflict', string.format('%d', seq), hash, 'turn'}
  end
  return {'conflict', string.format('%d', seq), hash}
end
if now > tonumber(ARGV[3]) then
  return {'expired'}
end
local n = tonumber(ARGV[4])
local a = 5
local k = 8
local lastId, lastHash
local top = redis.call('ZRANGE', KEYS[6], -1, -1, 'WITHSCORES')
local tmax = top[2] and tonumber(top[2]) or nil
for i = 1, n do
  local id, json, h, t, nIdx = ARGV[a], ARGV[a + 1], ARGV[a + 2], ARGV[a + 3], tonumber(ARGV[a + 4])
  a = a + 5
  seq = seq + 1
  local s = string.format('%d', seq)
  redis.call('XADD', KEYS[2], s .. '-0', 'entry', json)
  redis.call('HSET', KEYS[3], id, s)
  redis.call('ZADD', KEYS[4], t, s)
  -- Time records that bound a time range in seq order (see query-script.ts).
  if not tmax or tonumber(t) > tmax then
    redis.call('ZADD', KEYS[6], t, s)
    tmax = tonumber(t)
  end
  redis.call('ZREMRANGEBYSCORE', KEYS[7], t, '+inf')
  redis.call('ZADD', KEYS[7], t, s)
  for j = 1, nIdx do
    redis.call('ZADD', KEYS[k], s, s)
    k = k + 1
  end
  lastId, lastHash = id, h
end
redis.call('HSET', KEYS[1], 'seq', string.format('%d', seq), 'hash', lastHash, 'id', lastId)
if head[3] then redis.call('HDEL', KEYS[1], 'turn', 'turn_until') end
return {'ok', string.format('%d', seq)}
`;

/**
 * Settles a batch whose append reply never came: either it is stored (reply {'landed',
 * first seq}) or a tombstone makes sure it never will be (reply {'cancelled'}).
 *
 * KEYS: 1 ids, 2 cancel tombstone. ARGV: 1 id of the batch's first entry, 2 tombstone TTL in seconds.
 */
export const SETTLE_SCRIPT = `
local landed = redis.call('HGET', KEYS[1], ARGV[1])
if landed then return {'landed', landed} end
redis.call('SET', KEYS[2], '1', 'EX', ARGV[2])
return {'cancelled'}
`;
