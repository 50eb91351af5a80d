import { GENESIS_HASH } from '../chain.js';
import { TREE_CHUNK_RECORDS } from './redis-keys.js';

/**
 * How long a lease lasts (ms of Redis's clock): its holder alone may append meanwhile.
 * Leases exist only under contention, so this bounds the extra wait a writer sees then.
 */
export const LEASE_MS = 20;
/** A writer whose batch lost the race this many times takes the lease. */
export const LEASE_AFTER_LOSSES = 3;

/**
 * Compare-and-append of one sealed batch, atomic in Redis; with no entries, a probe that
 * asks for the head and the lease.
 *
 * KEYS: 1 head, 2 stream, 3 ids, 4 time index, 5 cancel tombstone of this batch,
 *       6 prefix-max time records, 7 suffix-min time records, 8 and 9 the tree chunks of
 *       the batch's first and last tree record, 10.. the batch's distinct equality index keys.
 * ARGV: 1 expected head seq, 2 expected head hash, 3 deadline in Redis-clock ms,
 *       4 races this batch has lost, 5 the writer's id, 6 entry count n (0: a probe),
 *       7 hash of the last entry, 8 since when the writer has been refused (Redis-clock ms,
 *       '' if it is not waiting), 9 the tree records the batch completes ('' if the writer
 *       does not know the tree's frontier), 10 the position of the first of them, 11 the
 *       tree's frontier after the batch (base64 of its hashes, '' with no records),
 *       12 the n entry ids, space-separated, 13 the n stored entries, one after the other,
 *       14 their lengths in bytes, space-separated, 15 their timestamps in ms, space-separated,
 *       then for each equality index key (KEYS[10..], same order) the positions in the
 *       batch (1..n, space-separated) of the entries it indexes.
 *       (Four arguments for the entries, not three per entry: the client frames every
 *       argument on its own, about 2 KB of garbage per entry.)
 * Reply: {'ok', last seq, leaves in the tree}
 *        | {'conflict', head seq, head hash, 'lease' or '', leaves in the tree, frontier}
 *        | {'busy', head seq, head hash, ms to wait, leaves in the tree, frontier}
 *        | {'landed', first seq}
 *        | {'cancelled'} | {'expired'} | {'headless'}.
 *
 * Contention: a writer that just appended knows the new head without a round trip, so it
 * tends to win again and again, and every loser has sealed its batch for nothing. So a
 * writer that lost LEASE_AFTER_LOSSES times, or probes after waiting, takes a lease
 * (head hash `lease`, `lease_until`): for LEASE_MS only it may append, batch after batch.
 * Of the writers refused meanwhile, the one waiting longest is next (`next`, `next_until`,
 * `next_since`): nobody else may append until it has probed and taken its own lease. Refused writers are told how long to
 * wait ('busy') and then probe, which costs Redis little and them no sealing. When nobody
 * was refused during a lease, it lapses and writers race freely again.
 *
 * The deadline makes a call that reached Redis after its caller timed out (a slow or
 * blocked server) refuse to write, so a rejected append does not land later.
 *
 * The Merkle tree grows with the chain: the records are stored only when the tree holds
 * exactly the leaves up to the expected head (the head hash's `tree` field), which the
 * compare on the head makes the writer's frontier. A tree that lags (a log older than the
 * tree) is left to the catch-up script and the chain goes on. The head hash keeps the
 * frontier of the tree at its `tree` size (`frontier`), and a conflict or busy reply
 * carries it: a writer that lost a race seals its next batch with the tree's records
 * without another round trip, so contention does not leave the tree behind the chain.
 *
 * All checks run before the first write, and only the first XADD of a batch can fail
 * (later ids are larger; the scores are numbers the caller checked), so an error reply
 * means nothing was written. Each index gets one command per batch, not one per entry.
 */
export const APPEND_SCRIPT = `
if redis.call('EXISTS', KEYS[5]) == 1 then return {'cancelled'} end
local n = tonumber(ARGV[6])
local POS = 6
local ids, jsons, times = {}, {}, {}
for id in string.gmatch(ARGV[12], '%S+') do ids[#ids + 1] = id end
local at = 1
for length in string.gmatch(ARGV[14], '%d+') do
  jsons[#jsons + 1] = string.sub(ARGV[13], at, at + tonumber(length) - 1)
  at = at + tonumber(length)
end
for t in string.gmatch(ARGV[15], '%S+') do times[#times + 1] = t end
if #ids ~= n or #jsons ~= n or #times ~= n or at ~= #ARGV[13] + 1 then
  return redis.error_reply('malformed audit batch')
end
if n > 0 then
  local landed = redis.call('HGET', KEYS[3], ids[1])
  if landed then return {'landed', landed} end
end
local head = redis.call('HMGET', KEYS[1], 'seq', 'hash', 'lease', 'lease_until', 'next', 'next_until', 'next_since', 'tree', 'frontier')
if not head[1] and redis.call('XLEN', KEYS[2]) > 0 then return {'headless'} end
local seq = tonumber(head[1] or '0')
local seqArg = string.format('%d', seq)
local hash = head[2] or '${GENESIS_HASH}'
local treeArg, frontierArg = head[8] or '0', head[9] or ''
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local me = ARGV[5]
local leaseUntil = head[4] and tonumber(head[4]) or 0
local nextUntil = head[6] and tonumber(head[6]) or 0
local leased = head[3] and leaseUntil > now
local reserved = head[5] and nextUntil > now

if leased and head[3] ~= me then
  local since = ARGV[8] ~= '' and tonumber(ARGV[8]) or now
  if not reserved or (head[5] ~= me and since < tonumber(head[7] or now)) then
    redis.call('HSET', KEYS[1], 'next', me, 'next_until', leaseUntil + ${LEASE_MS}, 'next_since', since)
  end
  return {'busy', seqArg, hash, leaseUntil - now, treeArg, frontierArg}
end
if not leased and reserved and head[5] ~= me then
  return {'busy', seqArg, hash, math.min(nextUntil - now, ${LEASE_MS}), treeArg, frontierArg}
end
local function takeLease()
  redis.call('HSET', KEYS[1], 'lease', me, 'lease_until', now + ${LEASE_MS})
  if head[5] == me then redis.call('HDEL', KEYS[1], 'next', 'next_until') end
end
if n == 0 or seq ~= tonumber(ARGV[1]) or hash ~= ARGV[2] then
  if not leased and (n == 0 or reserved or tonumber(ARGV[4]) + 1 >= ${LEASE_AFTER_LOSSES}) then
    takeLease()
    return {'conflict', seqArg, hash, 'lease', treeArg, frontierArg}
  end
  return {'conflict', seqArg, hash, '', treeArg, frontierArg}
end
if now > tonumber(ARGV[3]) then
  return {'expired'}
end
if not leased and reserved then takeLease() end

-- Runs cmd key a1 a2 ... over a list of arguments, in chunks Lua's unpack can take.
local function each(cmd, key, list)
  for from = 1, #list, 1000 do
    redis.call(cmd, key, unpack(list, from, math.min(from + 999, #list)))
  end
end
local function push(list, a, b)
  list[#list + 1] = a
  list[#list + 1] = b
end

local seqs, idSeqs, timeSeqs = {}, {}, {}
for i = 1, n do
  local s = string.format('%d', seq + i)
  seqs[i] = s
  redis.call('XADD', KEYS[2], s .. '-0', 'entry', jsons[i])
  idSeqs[2 * i - 1], idSeqs[2 * i] = ids[i], s
  timeSeqs[2 * i - 1], timeSeqs[2 * i] = times[i], s
end
each('HSET', KEYS[3], idSeqs)
each('ZADD', KEYS[4], timeSeqs)

-- Time records that bound a time range in seq order (see query-script.ts): the batch's
-- entries newer than everything before them, and those older than everything after them
-- (which retire every earlier record at or above the batch's oldest timestamp).
local top = redis.call('ZRANGE', KEYS[6], -1, -1, 'WITHSCORES')
local tmax = top[2] and tonumber(top[2]) or nil
local floor, ceiling = {}, {}
for i = 1, n do
  local t = tonumber(times[i])
  if not tmax or t > tmax then
    push(floor, times[i], seqs[i])
    tmax = t
  end
end
local tmin, tminArg
for i = n, 1, -1 do
  local t = tonumber(times[i])
  if not tmin or t < tmin then
    push(ceiling, times[i], seqs[i])
    tmin, tminArg = t, times[i]
  end
end
if #floor > 0 then each('ZADD', KEYS[6], floor) end
redis.call('ZREMRANGEBYSCORE', KEYS[7], tminArg, '+inf')
each('ZADD', KEYS[7], ceiling)

for k = 10, #KEYS do
  local members = {}
  for p in string.gmatch(ARGV[POS + k], '%d+') do
    push(members, seqs[tonumber(p)], seqs[tonumber(p)])
  end
  each('ZADD', KEYS[k], members)
end

local tree = tonumber(treeArg)
local frontier = frontierArg
if ARGV[9] ~= '' and tree == seq then
  local first = tonumber(ARGV[10])
  local chunkStart = math.floor(first / ${TREE_CHUNK_RECORDS}) * ${TREE_CHUNK_RECORDS}
  local room = (chunkStart + ${TREE_CHUNK_RECORDS} - first) * 32
  redis.call('SETRANGE', KEYS[8], (first - chunkStart) * 32, string.sub(ARGV[9], 1, room))
  if #ARGV[9] > room then redis.call('SETRANGE', KEYS[9], 0, string.sub(ARGV[9], room + 1)) end
  tree = seq + n
  frontier = ARGV[11]
end

redis.call('HSET', KEYS[1], 'seq', seqs[n], 'hash', ARGV[7], 'id', ids[n], 'tree', string.format('%d', tree), 'frontier', frontier)
return {'ok', seqs[n], string.format('%d', tree)}
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

/**
 * Hashes a lagging tree forward: stores the records of leaves [from, to) when the tree
 * holds exactly `from` leaves, so that concurrent catch-ups and appends never store a
 * record twice or leave a gap.
 *
 * KEYS: 1 head, 2 and 3 the tree chunks of the first and last record.
 * ARGV: 1 from (leaves the tree must hold), 2 to, 3 the records, 4 position of the first,
 *       5 the frontier at `to` (base64 of its hashes).
 * Reply: {'ok', to} | {'moved', leaves the tree holds}.
 */
export const TREE_CATCH_UP_SCRIPT = `
local tree = tonumber(redis.call('HGET', KEYS[1], 'tree') or '0')
if tree ~= tonumber(ARGV[1]) then return {'moved', string.format('%d', tree)} end
local seq = tonumber(redis.call('HGET', KEYS[1], 'seq') or '0')
if tonumber(ARGV[2]) > seq then return {'moved', string.format('%d', tree)} end
local first = tonumber(ARGV[4])
local chunkStart = math.floor(first / ${TREE_CHUNK_RECORDS}) * ${TREE_CHUNK_RECORDS}
local room = (chunkStart + ${TREE_CHUNK_RECORDS} - first) * 32
redis.call('SETRANGE', KEYS[2], (first - chunkStart) * 32, string.sub(ARGV[3], 1, room))
if #ARGV[3] > room then redis.call('SETRANGE', KEYS[3], 0, string.sub(ARGV[3], room + 1)) end
redis.call('HSET', KEYS[1], 'tree', ARGV[2], 'frontier', ARGV[5])
return {'ok', ARGV[2]}
`;
