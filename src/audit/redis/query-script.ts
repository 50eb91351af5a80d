/**
 * One page of an audit query, answered atomically from the indexes.
 *
 * KEYS: 1 head, 2 stream, 3 time index, 4 scratch, 5 time floor records, 6 time ceiling
 *       records, 7.. equality index keys (0..n).
 * ARGV: 1 order 'asc'|'desc', 2 after seq or '', 3 limit, 4 since ms or '', 5 until ms or ''.
 * Reply: {total, next seq or -1, entry JSON...}. The total is always exact.
 *
 * Timestamps are not monotonic in seq (replicas race), so a time range is bounded in
 * seq order by two record sets the append script keeps: the first prefix-maximum at or
 * after `since` is the lowest seq that can match (everything before it is older), the
 * last suffix-minimum at or before `until` the highest (everything after it is newer).
 *
 * Plans: no filter -> the seq range itself (the chain is gap-free); one equality filter
 * -> its sorted set; time only -> walk the bounded seq range checking timestamps, so a
 * page costs its size plus the out-of-order entries at the range's edges; otherwise the
 * smallest candidate set is filtered by membership in the others into a scratch set
 * scored by seq, which is paged and deleted before the script returns.
 *
 * Retention: only seqs from the head's `from` on are answered (retention.ts). While a
 * trim is removing the archived entries, their index members may still be there, so
 * every plan bounds its seqs below by `from`, and the time total subtracts the archived
 * entries still indexed (those from the stream's first item up to `from` - 1).
 */
export const QUERY_SCRIPT = `
local order, limit = ARGV[1], tonumber(ARGV[3])
local after = ARGV[2] ~= '' and tonumber(ARGV[2]) or nil
local hasTime = ARGV[4] ~= '' or ARGV[5] ~= ''
local lo = ARGV[4] ~= '' and tonumber(ARGV[4]) or -math.huge
local hi = ARGV[5] ~= '' and tonumber(ARGV[5]) or math.huge
local loArg = ARGV[4] ~= '' and ARGV[4] or '-inf'
local hiArg = ARGV[5] ~= '' and ARGV[5] or '+inf'
local FIRST_EQ = 7
local nEq = #KEYS - FIRST_EQ + 1

local function fmt(n) return string.format('%d', n) end
local fromSeq = tonumber(redis.call('HGET', KEYS[1], 'from') or '1')

local function fetch(seqs)
  local out = {}
  for _, s in ipairs(seqs) do
    local found = redis.call('XRANGE', KEYS[2], s .. '-0', s .. '-0')
    if found[1] then
      local fields = found[1][2]
      for f = 1, #fields, 2 do
        if fields[f] == 'entry' then out[#out + 1] = fields[f + 1] end
      end
    end
  end
  return out
end

local function reply(total, seqs)
  local next = -1
  if #seqs > limit then
    next = tonumber(seqs[limit])
    seqs[#seqs] = nil
  end
  local out = {total, next}
  for _, json in ipairs(fetch(seqs)) do out[#out + 1] = json end
  return out
end

local function inTime(s)
  local t = redis.call('ZSCORE', KEYS[3], s)
  return t and tonumber(t) >= lo and tonumber(t) <= hi
end

-- Walks seqs from..to (step +1 or -1), keeping up to limit + 1 that pass keep().
local function walk(from, to, step, keep)
  local seqs = {}
  local s = from
  while (to - s) * step >= 0 and #seqs <= limit do
    if keep(fmt(s)) then seqs[#seqs + 1] = fmt(s) end
    s = s + step
  end
  return seqs
end

-- Walks the seq range [a, b] in page order, starting after the cursor.
local function walkRange(a, b, keep)
  if order == 'asc' then return walk(math.max(a, (after or 0) + 1), b, 1, keep) end
  return walk(math.min(b, (after or b + 1) - 1), a, -1, keep)
end

-- No filter: seqs fromSeq..head are the answer.
if nEq == 0 and not hasTime then
  local head = tonumber(redis.call('HGET', KEYS[1], 'seq') or '0')
  return reply(math.max(0, head - fromSeq + 1), walkRange(fromSeq, head, function() return true end))
end

-- The seq range [a, b] outside which no entry is in the time range.
local a, b
if hasTime then
  local first = redis.call('ZRANGE', KEYS[5], loArg, '+inf', 'BYSCORE', 'LIMIT', 0, 1)[1]
  local last = redis.call('ZRANGE', KEYS[6], hiArg, '-inf', 'BYSCORE', 'REV', 'LIMIT', 0, 1)[1]
  -- A floor record before fromSeq (the one a trim keeps) starts the range at fromSeq.
  a, b = first and math.max(tonumber(first), fromSeq), last and tonumber(last)
  if not a or not b or a > b then return {0, -1} end
end

-- Entries of the time range before fromSeq that a trim has not removed yet: the cheaper
-- of walking those seqs or the range's members.
local function archivedInTime(inRange)
  local oldest = redis.call('XRANGE', KEYS[2], '-', '+', 'COUNT', 1)[1]
  local oldestSeq = oldest and tonumber(string.match(oldest[1], '^%d+')) or fromSeq
  if oldestSeq >= fromSeq then return 0 end
  local n = 0
  if fromSeq - oldestSeq <= inRange then
    for s = oldestSeq, fromSeq - 1 do
      if inTime(fmt(s)) then n = n + 1 end
    end
  else
    for _, s in ipairs(redis.call('ZRANGE', KEYS[3], loArg, hiArg, 'BYSCORE')) do
      if tonumber(s) < fromSeq then n = n + 1 end
    end
  end
  return n
end

if nEq == 0 then
  local inRange = redis.call('ZCOUNT', KEYS[3], loArg, hiArg)
  return reply(inRange - archivedInTime(inRange), walkRange(a, b, inTime))
end

local set = KEYS[FIRST_EQ]
local scratch = false
if hasTime or nEq > 1 then
  set = KEYS[4]
  scratch = true
  redis.call('DEL', set)
  if not hasTime then
    local args = {set, nEq}
    for i = FIRST_EQ, #KEYS do args[#args + 1] = KEYS[i] end
    args[#args + 1] = 'AGGREGATE'
    args[#args + 1] = 'MAX'
    redis.call('ZINTERSTORE', unpack(args))
  else
    -- Iterate the smallest candidate set (an equality index within [a, b], or the time
    -- range); check membership in the others.
    local base, baseSize = nil, redis.call('ZCOUNT', KEYS[3], loArg, hiArg)
    for i = FIRST_EQ, #KEYS do
      local size = redis.call('ZCOUNT', KEYS[i], a, b)
      if size < baseSize then base, baseSize = i, size end
    end
    local members
    if base then members = redis.call('ZRANGE', KEYS[base], a, b, 'BYSCORE')
    else members = redis.call('ZRANGE', KEYS[3], loArg, hiArg, 'BYSCORE') end
    local batch = {}
    for _, s in ipairs(members) do
      local keep = not base or inTime(s)
      for i = FIRST_EQ, #KEYS do
        if keep and i ~= base and not redis.call('ZSCORE', KEYS[i], s) then keep = false end
      end
      if keep then
        batch[#batch + 1] = s
        batch[#batch + 1] = s
        if #batch >= 1000 then redis.call('ZADD', set, unpack(batch)); batch = {} end
      end
    end
    if #batch > 0 then redis.call('ZADD', set, unpack(batch)) end
  end
end

-- Scores are seqs: archived members still in an index lie below fromSeq.
local total = redis.call('ZCOUNT', set, fromSeq, '+inf')
local seqs
if order == 'asc' then
  local start = (after and after >= fromSeq) and ('(' .. fmt(after)) or fmt(fromSeq)
  seqs = redis.call('ZRANGE', set, start, '+inf', 'BYSCORE', 'LIMIT', 0, limit + 1)
else
  local start = after and ('(' .. fmt(after)) or '+inf'
  seqs = redis.call('ZRANGE', set, start, fmt(fromSeq), 'BYSCORE', 'REV', 'LIMIT', 0, limit + 1)
end
if scratch then redis.call('DEL', set) end
return reply(total, seqs)
`;
