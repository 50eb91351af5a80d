/**
 * One page of an audit query, answered atomically from the indexes.
 *
 * KEYS: 1 head, 2 stream, 3 time index, 4 scratch, 5.. equality index keys (0..n).
 * ARGV: 1 order 'asc'|'desc', 2 after seq or '', 3 limit, 4 since ms or '', 5 until ms or ''.
 * Reply: {total, next seq or -1, entry JSON...}.
 *
 * Plan: no filter -> the seq range itself (the chain is gap-free); one equality filter ->
 * its sorted set; otherwise the smallest candidate set (an equality index or the time
 * range) is filtered by membership in the others into a scratch set scored by seq,
 * which is paged and deleted before the script returns. The total is always exact.
 */
export const QUERY_SCRIPT = `
local order, limit = ARGV[1], tonumber(ARGV[3])
local after = ARGV[2] ~= '' and tonumber(ARGV[2]) or nil
local hasTime = ARGV[4] ~= '' or ARGV[5] ~= ''
local lo = ARGV[4] ~= '' and tonumber(ARGV[4]) or -math.huge
local hi = ARGV[5] ~= '' and tonumber(ARGV[5]) or math.huge
local loArg = ARGV[4] ~= '' and ARGV[4] or '-inf'
local hiArg = ARGV[5] ~= '' and ARGV[5] or '+inf'
local nEq = #KEYS - 4

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

-- No filter: seqs 1..head are the answer, paged arithmetically.
if nEq == 0 and not hasTime then
  local head = tonumber(redis.call('HGET', KEYS[1], 'seq') or '0')
  local seqs = {}
  if order == 'asc' then
    local s = (after or 0) + 1
    while s <= head and #seqs <= limit do seqs[#seqs + 1] = string.format('%d', s); s = s + 1 end
  else
    local s = math.min((after or head + 1) - 1, head)
    while s >= 1 and #seqs <= limit do seqs[#seqs + 1] = string.format('%d', s); s = s - 1 end
  end
  return reply(head, seqs)
end

local set = KEYS[5]
local scratch = false
if hasTime or nEq > 1 then
  set = KEYS[4]
  scratch = true
  redis.call('DEL', set)
  if not hasTime then
    local args = {set, nEq}
    for i = 5, #KEYS do args[#args + 1] = KEYS[i] end
    args[#args + 1] = 'AGGREGATE'
    args[#args + 1] = 'MAX'
    redis.call('ZINTERSTORE', unpack(args))
  else
    -- Iterate the smallest candidate set; check membership in the others.
    local base, baseSize = nil, redis.call('ZCOUNT', KEYS[3], loArg, hiArg)
    for i = 5, #KEYS do
      local size = redis.call('ZCARD', KEYS[i])
      if size < baseSize then base, baseSize = i, size end
    end
    local members
    if base then members = redis.call('ZRANGE', KEYS[base], 0, -1)
    else members = redis.call('ZRANGE', KEYS[3], loArg, hiArg, 'BYSCORE') end
    local batch = {}
    for _, s in ipairs(members) do
      local keep = true
      for i = 5, #KEYS do
        if keep and i ~= base and not redis.call('ZSCORE', KEYS[i], s) then keep = false end
      end
      if keep and base then
        local t = redis.call('ZSCORE', KEYS[3], s)
        keep = t and tonumber(t) >= lo and tonumber(t) <= hi
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

local total = redis.call('ZCARD', set)
local seqs
if order == 'asc' then
  local from = after and ('(' .. string.format('%d', after)) or '-inf'
  seqs = redis.call('ZRANGE', set, from, '+inf', 'BYSCORE', 'LIMIT', 0, limit + 1)
else
  local from = after and ('(' .. string.format('%d', after)) or '+inf'
  seqs = redis.call('ZRANGE', set, from, '-inf', 'BYSCORE', 'REV', 'LIMIT', 0, limit + 1)
end
if scratch then redis.call('DEL', set) end
return reply(total, seqs)
`;
