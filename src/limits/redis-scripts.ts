// The Redis limiter's server-side steps: one Lua script per operation, each run atomically by Redis
// (EVALSHA, reloaded with EVAL when the server answers NOSCRIPT after a restart or SCRIPT FLUSH).
// Every script reads the clock with TIME; the window and the billing day use the caller's `now`
// instead only when one is passed (the contract tests' clock). Lease expiry always uses Redis time.
//
// Generations. Redis holds a copy the ledger (the store) can rebuild, and a copy is trusted only
// in the generation (epoch) it was built in: the epoch is kept by the store and by Redis (G), a
// node passes the epoch it has checked with every account step, and each account carries the
// epoch it was built in (A.ep). An account of an older epoch, or one Redis lost, is unseeded: it
// admits nothing until a seed rebuilds it from the ledger; a node whose epoch is older than the
// account's is told so (-1 / refusal 7) and checks again. A limiter without a ledger runs in epoch
// 0, which an account without `ep` is in (the step-by-step seeding of setBalance/setSpent).
//
// Keys of one account (all in the `{acct:N}` hash slot, redis-keys.ts):
//   A  hash  ep, bal, res, rev, j:<journal> (the ledger's stored sequence of each node journal at the
//            last seed); per key k:<keyId>:n (in flight), :res (reserved), :day, :spent, :seed
//   T  hash  ticket id -> "<reserved>|<keyId>" for every admission not yet released or expired,
//            followed by "\n<budget>" for each budget its reservation counts in
//   A also holds b:<budget>:r, the reservations of the requests in flight counted in a budget
//            (rebuilt with the tickets, like res)
//   L  zset  ticket id scored by its lease expiry (Redis ms); renewed by the holder's heartbeat
//   D  zset  cancelled ticket ids (and released ones without a journal sequence) scored by that
//            time, kept `doneMs` so a replay changes nothing
//   U  hash  "<journal>|<seq>" -> "<cost>|<keyId>|<day>": debits released since the last seed whose
//            records the ledger did not hold at it; a seed keeps those it still lacks, so a release
//            is counted once whether it reaches Redis before or after the ledger has its record
//   W  zset  one key's admissions in the RPM window (member ticket id, score admission ms); written
//            only for keys with an RPM limit, so it never holds more than the limit
//   Z  zset  a token window's admissions (member ticket id, score admission ms): one per key with a
//            tokens-per-minute limit (tz:k:<keyId>) and one per account with one (tz:a)
//   H  hash  that window's tokens: ticket id -> tokens held (the worst case until the release
//            corrects it to the tokens used), and `sum`, their total. Like W, the token windows
//            live outside the account's generation: an epoch change or a reseed keeps them, and
//            a release corrects its entry whatever the epoch (setting a value: applied twice, it
//            changes nothing).
//   B  hash  the budgets' periods: <budget>|s (the start of the period counted, ms) and <budget>|p
//            (spent in it). Outside the generation (like W): a field missing is seeded from the
//            store's usage records (SET_BUDGET) before the budget admits anything
//   C  zset  "<journal>|<seq>" of every numbered release counted in B, scored by that time (Redis
//            ms), kept `doneMs`. B outlives U (a seed prunes it, a new epoch drops it), so B
//            remembers on its own which releases it counted: one sent again (a retry after a lost
//            answer, the releases a node sends again in a new epoch) changes B once. C lives and
//            is lost (or rolled back to a snapshot) with B
// And one per prefix:
//   G  hash  epoch, run (Redis's run_id when the epoch began), ledger (the store's id), since
//            (Redis ms), ack:<node> (the epoch the node has re-registered its tickets in)
import type { RedisClient } from "bun";

/** Shared Lua helpers, prepended to every script. */
const PRELUDE = `
local function int(n) return string.format('%d', n) end
local function clock()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function pick(given, fallback)
  if given == '' then return fallback end
  return tonumber(given)
end
local function dayOf(now, offsetMs) return math.floor((now + offsetMs) / 86400000) end
-- The account's generation against the caller's: 0 the same, 1 the account's state is older (or
-- lost) and not to be trusted, -1 the caller is behind (it must check the epoch again).
local function generation(A, epoch)
  local ep = tonumber(redis.call('HGET', A, 'ep') or '0')
  if ep == epoch then return 0 end
  if ep < epoch then return 1 end
  return -1
end
-- Starts the account over in the caller's generation: nothing of an older one is kept.
local function enter(A, T, L, U, D, epoch)
  redis.call('DEL', A, T, L, U, D)
  redis.call('HSET', A, 'ep', epoch)
end
-- A ticket's key and budgets, from the key id followed by a newline before each budget name.
local function splitKey(keyrec)
  local nl = string.find(keyrec, '\\n', 1, true)
  if not nl then return keyrec, {} end
  local names = {}
  for name in string.gmatch(string.sub(keyrec, nl + 1), '[^\\n]+') do table.insert(names, name) end
  return string.sub(keyrec, 1, nl - 1), names
end
-- Moves the reservations counted in budgets by \`r\`.
local function reserveIn(A, names, r)
  for _, name in ipairs(names) do redis.call('HINCRBY', A, 'b:' .. name .. ':r', r) end
end
-- Counts a settled cost in a budget, in the period of the release: the admission's, or the next
-- one once that has ended. A budget with no figure is left to its seed (the store holds the cost).
local function spendIn(B, name, start, stop, now, cost)
  local period = start
  if now >= stop then period = stop end
  local s = tonumber(redis.call('HGET', B, name .. '|s') or '-1')
  if s < 0 then return end
  if s < period then redis.call('HSET', B, name .. '|s', int(period), name .. '|p', cost)
  elseif s == period then redis.call('HINCRBY', B, name .. '|p', cost) end
end
-- Frees the slot and the reservation of a ticket if it still holds them, and drops its lease.
local function unhold(A, T, L, id)
  local rec = redis.call('HGET', T, id)
  if rec then
    local sep = string.find(rec, '|', 1, true)
    local r = tonumber(string.sub(rec, 1, sep - 1))
    local key, names = splitKey(string.sub(rec, sep + 1))
    reserveIn(A, names, -r)
    local kf = 'k:' .. key .. ':'
    redis.call('HINCRBY', A, 'res', int(-r))
    redis.call('HINCRBY', A, kf .. 'res', int(-r))
    redis.call('HINCRBY', A, kf .. 'n', -1)
    redis.call('HDEL', T, id)
  end
  redis.call('ZREM', L, id)
end
-- Frees every ticket whose lease ran out (its node stopped renewing).
local function expire(A, T, L, at)
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', L, '-inf', at)) do unhold(A, T, L, id) end
end
local function oldestLeavesIn(W, windowMs, now)
  local o = redis.call('ZRANGE', W, 0, 0, 'WITHSCORES')
  if o[2] == nil then return 0 end
  return math.max(0, tonumber(o[2]) + windowMs - now)
end
local function spentToday(v, day)
  if tonumber(v) == day then return 1 end
  return 0
end
-- A token window pruned to \`edge\`: what it still holds.
local function tprune(Z, H, edge)
  local used = tonumber(redis.call('HGET', H, 'sum') or '0')
  local gone = redis.call('ZRANGEBYSCORE', Z, '-inf', edge)
  if #gone == 0 then return used end
  for _, id in ipairs(gone) do
    used = used - (tonumber(redis.call('HGET', H, id)) or 0)
    redis.call('HDEL', H, id)
  end
  redis.call('ZREMRANGEBYSCORE', Z, '-inf', edge)
  redis.call('HSET', H, 'sum', int(used))
  return used
end
-- How long until \`need\` more tokens fit under \`limit\` (entries leave oldest first); -1 never.
local function twait(Z, H, used, need, limit, windowMs, now)
  if need > limit then return -1 end
  local o = redis.call('ZRANGE', Z, 0, -1, 'WITHSCORES')
  for i = 1, #o, 2 do
    used = used - (tonumber(redis.call('HGET', H, o[i])) or 0)
    if used + need <= limit then return math.max(0, tonumber(o[i + 1]) + windowMs - now) end
  end
  return 0
end
local function tadd(Z, H, id, need, now, windowMs)
  redis.call('ZADD', Z, now, id)
  redis.call('HSET', H, id, int(need))
  redis.call('HINCRBY', H, 'sum', int(need))
  redis.call('PEXPIRE', Z, windowMs)
  redis.call('PEXPIRE', H, windowMs)
end
-- Sets what a ticket holds in a token window to \`tokens\` (nothing once it left the window).
local function tset(H, id, tokens)
  local r = redis.call('HGET', H, id)
  if r then
    redis.call('HSET', H, id, tokens)
    redis.call('HINCRBY', H, 'sum', tonumber(tokens) - tonumber(r))
  end
end
-- Debits a settled cost: the balance, and the key's spending in its billing day.
local function debit(A, key, cost, day)
  redis.call('HINCRBY', A, 'bal', int(-tonumber(cost)))
  local kf = 'k:' .. key .. ':'
  if spentToday(redis.call('HGET', A, kf .. 'day'), day) == 1 then
    redis.call('HINCRBY', A, kf .. 'spent', cost)
  else
    redis.call('HSET', A, kf .. 'day', int(day), kf .. 'spent', cost)
  end
end
`;

/**
 * KEYS A T L W D [KZ KH] [AZ AH] [B]; ARGV epoch ticketId keyId rpm concurrency cap reserve now
 * windowMs leaseMs dayOffsetMs tpm accountTpm tokens budgets then (name limit start end) per budget
 * (-1 = no limit, '' now = Redis time; the key's token window KZ KH is passed when tpm is set, the
 * account's AZ AH when accountTpm is, B when there are budgets). Returns {admitted, refusal,
 * count, resetMs, balance, accountReserved, keyReserved, spent, now, redisMs, keyTokens,
 * keyTokensResetMs, accountTokens, accountTokensResetMs, tokenWaitMs, tokenLimit, budget,
 * budgetSpent, budgetReserved}, with nothing changed on a refusal: 1 rpm, 8 tokens per minute (the
 * key's window, then the account's), 2 concurrency, 3 balance, 4 cap, 11 a budget (`budget` its
 * number; checked in that order; a further limit is one more check before the first write); 9 a
 * budget has no figure in B (seed it, then retry), 10 `now` is outside a budget's period as the
 * caller computed it (compute it again for `now`), 5 the ticket id was already cancelled (its caller gave up; see CANCEL), 6 the
 * account is not seeded in this epoch (rebuild it from the ledger, then retry), 7 the caller's
 * epoch is older than the account's (check the epoch again).
 */
const ACQUIRE = `
local A, T, L, W, D = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local epoch, id, key = tonumber(ARGV[1]), ARGV[2], ARGV[3]
local rpm, conc, cap, reserve = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local windowMs, leaseMs, offsetMs = tonumber(ARGV[9]), tonumber(ARGV[10]), tonumber(ARGV[11])
local tpm, atpm, need = tonumber(ARGV[12]), tonumber(ARGV[13]), tonumber(ARGV[14])
local nb = tonumber(ARGV[15])
local at = clock()
local now = pick(ARGV[8], at)
local function early(code, budget)
  return {0, code, 0, 0, 0, 0, 0, 0, now, at, 0, 0, 0, 0, 0, 0, budget or 0, 0, 0}
end
local g = generation(A, epoch)
if g < 0 then return early(7) end
if g > 0 or redis.call('HEXISTS', A, 'rev') == 0 then return early(6) end
if redis.call('ZSCORE', D, id) then return early(5) end
expire(A, T, L, at)
redis.call('ZREMRANGEBYSCORE', W, '-inf', now - windowMs)
local count = redis.call('ZCARD', W)
local kf = 'k:' .. key .. ':'
local v = redis.call('HMGET', A, 'bal', 'res', kf .. 'n', kf .. 'res', kf .. 'day', kf .. 'spent')
local bal, res = tonumber(v[1]) or 0, tonumber(v[2]) or 0
local n, kres = tonumber(v[3]) or 0, tonumber(v[4]) or 0
local spent = 0
if spentToday(v[5], dayOf(now, offsetMs)) == 1 then spent = tonumber(v[6]) or 0 end
local windows = {}
local nextKey = 6
for _, limit in ipairs({tpm, atpm}) do
  if limit >= 0 then
    local Z, H = KEYS[nextKey], KEYS[nextKey + 1]
    nextKey = nextKey + 2
    table.insert(windows, {Z, H, limit, tprune(Z, H, now - windowMs)})
  else
    table.insert(windows, false)
  end
end
local refusal, wait, tlimit = 0, 0, 0
if rpm >= 0 and count >= rpm then refusal = 1 end
if refusal == 0 then
  for _, w in ipairs(windows) do
    if w and w[4] + need > w[3] then
      refusal, tlimit = 8, w[3]
      wait = twait(w[1], w[2], w[4], need, w[3], windowMs, now)
      break
    end
  end
end
if refusal ~= 0 then
elseif conc >= 0 and n >= conc then refusal = 2
elseif res + reserve > bal then refusal = 3
elseif cap >= 0 and spent + kres + reserve > cap then refusal = 4 end
local B = KEYS[nextKey]
local budgets, bi, bspent, bres = {}, 0, 0, 0
if refusal == 0 then
  for i = 1, nb do
    local o = 15 + (i - 1) * 4
    local name, limit, start, stop = ARGV[o + 1], tonumber(ARGV[o + 2]), tonumber(ARGV[o + 3]), tonumber(ARGV[o + 4])
    if now < start or now >= stop then return early(10, i) end
    local s = redis.call('HGET', B, name .. '|s')
    if not s then return early(9, i) end
    local p = 0
    if tonumber(s) >= start then p = tonumber(redis.call('HGET', B, name .. '|p') or '0') end
    local r = tonumber(redis.call('HGET', A, 'b:' .. name .. ':r') or '0')
    if p + r + reserve > limit then
      refusal, bi, bspent, bres = 11, i, p, r
      break
    end
    table.insert(budgets, {name, start, tonumber(s)})
  end
end
local function tokens(added)
  local out = {}
  for i = 1, 2 do
    local w = windows[i]
    if w then
      table.insert(out, w[4] + added)
      table.insert(out, oldestLeavesIn(w[1], windowMs, now))
    else
      table.insert(out, 0)
      table.insert(out, 0)
    end
  end
  return out
end
if refusal ~= 0 then
  local t = tokens(0)
  return {0, refusal, count, oldestLeavesIn(W, windowMs, now), bal, res, kres, spent, now, at, t[1], t[2], t[3], t[4], wait, tlimit, bi, bspent, bres}
end
local keyrec = key
for _, b in ipairs(budgets) do
  if b[3] < b[2] then redis.call('HSET', B, b[1] .. '|s', int(b[2]), b[1] .. '|p', 0) end
  redis.call('HINCRBY', A, 'b:' .. b[1] .. ':r', ARGV[7])
  keyrec = keyrec .. '\\n' .. b[1]
end
if rpm >= 0 then
  redis.call('ZADD', W, now, id)
  redis.call('PEXPIRE', W, windowMs)
end
for _, w in ipairs(windows) do
  if w then tadd(w[1], w[2], id, need, now, windowMs) end
end
redis.call('HINCRBY', A, 'res', ARGV[7])
redis.call('HINCRBY', A, kf .. 'res', ARGV[7])
redis.call('HINCRBY', A, kf .. 'n', 1)
redis.call('HSET', T, id, ARGV[7] .. '|' .. keyrec)
redis.call('ZADD', L, at + leaseMs, id)
local t = tokens(need)
return {1, 0, count + 1, oldestLeavesIn(W, windowMs, now), bal, res + reserve, kres + reserve, spent, now, at, t[1], t[2], t[3], t[4], 0, 0, 0, 0, 0}
`;

/**
 * KEYS A T L D U B C [H...]; ARGV epoch dayOffsetMs doneMs journal n, then per release: ticketId
 * keyId cost now seq tokens hashes budgets, then (name start end) per budget. Releases n tickets
 * of one account in one call (a node sends the releases settled in the same turn of its event loop
 * together: one round trip for them all), each exactly as if it were released alone, in order:
 * - `hashes` lists the KEYS indexes (comma-separated) of the token windows the ticket was admitted
 *   in; with `tokens`, its entry in each is first set to the tokens it used (in every epoch:
 *   setting is idempotent);
 * - the ticket's slot and reservation are freed if it still holds them, and the cost debited
 *   (counted as spent in the day of `now`) once: with the record's journal sequence `seq` (the
 *   normal path) once per journal|seq (U), and not at all when the ledger held the record at the
 *   last seed (seq <= A's j:<journal>: the seed's balance has it), while on an account not seeded
 *   yet it is only kept in U and the seed applies it; without a sequence once per ticket id (D);
 * - the cost counts in each budget (B) in the period of the release once: without a sequence with
 *   the debit (once per ticket id, D); with one once per journal|seq in C, which outlives U and the
 *   epoch as B does. Its own record, not U's or the seed's: a replay after a seed pruned U, or in
 *   a new epoch, is skipped by the debit (the seed's balance holds it) but B was never rebuilt
 *   from that seed, and a first arrival after a seed that held its record is not in B yet.
 * A ticket whose lease expired is still debited (its reservation was already freed). An account of
 * an older epoch is started over in the caller's (the ledger rebuilds it). Returns -1, changing
 * nothing but the token windows, if the caller's epoch is older than the account's; else the
 * number of releases debited or kept for the seed (the others were already counted).
 */
const RELEASE = `
local A, T, L, D, U, B, C = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local epoch, offsetMs, doneMs, journal = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
local n = tonumber(ARGV[5])
-- Each release's first argument; the token windows are set first, whatever the epoch.
local starts = {}
local o = 6
for r = 1, n do
  starts[r] = o
  local tokens, hashes = ARGV[o + 5], ARGV[o + 6]
  if tokens ~= '' then
    for i in string.gmatch(hashes, '%d+') do tset(KEYS[tonumber(i)], ARGV[o], tokens) end
  end
  o = o + 8 + tonumber(ARGV[o + 7]) * 3
end
local g = generation(A, epoch)
if g < 0 then return -1 end
if g > 0 then enter(A, T, L, U, D, epoch) end
local at = clock()
local seeded = redis.call('HEXISTS', A, 'rev') == 1
local held = tonumber(redis.call('HGET', A, 'j:' .. journal) or '0')
local trim, marked = false, false
local function one(o)
  local id, key, cost, seq = ARGV[o], ARGV[o + 1], ARGV[o + 2], ARGV[o + 4]
  local now = pick(ARGV[o + 3], at)
  local day = dayOf(now, offsetMs)
  local nb = tonumber(ARGV[o + 7])
  -- \`mark\`: the journal|seq of a numbered release, counted only if C does not hold it yet.
  local function spendBudgets(mark)
    if nb == 0 then return end
    if mark then
      if redis.call('ZADD', C, 'NX', at, mark) == 0 then return end
      marked = true
    end
    for i = 1, nb do
      local b = o + 8 + (i - 1) * 3
      spendIn(B, ARGV[b], tonumber(ARGV[b + 1]), tonumber(ARGV[b + 2]), now, cost)
    end
  end
  if seq == '' then
    if redis.call('ZSCORE', D, id) then return 0 end
    unhold(A, T, L, id)
    debit(A, key, cost, day)
    spendBudgets()
    redis.call('ZADD', D, at, id)
    trim = true
    return 1
  end
  unhold(A, T, L, id)
  local field = journal .. '|' .. seq
  if redis.call('HEXISTS', U, field) == 1 then return 0 end
  -- Before the ledger's skip below, which is about the balance only: C decides for the budgets.
  spendBudgets(field)
  if seeded and tonumber(seq) <= held then return 0 end
  redis.call('HSET', U, field, cost .. '|' .. key .. '|' .. int(day))
  if seeded then debit(A, key, cost, day) end
  return 1
end
local counted = 0
for r = 1, n do counted = counted + one(starts[r]) end
if trim then redis.call('ZREMRANGEBYSCORE', D, '-inf', at - doneMs) end
if marked then
  redis.call('ZREMRANGEBYSCORE', C, '-inf', at - doneMs)
  redis.call('PEXPIRE', C, doneMs)
end
return counted
`;

/**
 * KEYS A T L D W [H...]; ARGV epoch ticketId doneMs (H: the token windows' hashes, whose entries
 * for the ticket are set to 0). Undoes an admission whose caller gave up waiting for
 * the answer (the acquire timed out on the node's side): frees its slot and reservation and takes
 * it out of the RPM window, if the acquire ran; either way the id is marked done, so an acquire that
 * runs after this (reordered behind a script reload) refuses (5) and a release changes nothing. In
 * another epoch the acquire admitted nothing that is still counted. Returns 1, or 0 when the id was
 * already done or the epochs differ.
 */
const CANCEL = `
local A, T, L, D, W = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local id = ARGV[2]
for i = 6, #KEYS do tset(KEYS[i], id, '0') end
if generation(A, tonumber(ARGV[1])) ~= 0 then return 0 end
local at = clock()
if redis.call('ZSCORE', D, id) then return 0 end
unhold(A, T, L, id)
redis.call('ZREM', W, id)
redis.call('ZADD', D, at, id)
redis.call('ZREMRANGEBYSCORE', D, '-inf', at - tonumber(ARGV[3]))
return 1
`;

/**
 * KEYS W [KZ KH] [AZ AH]; ARGV now windowMs keyTokens accountTokens ('1' when that token window is
 * passed). Returns {count, resetMs, keyTokens, keyTokensResetMs, accountTokens,
 * accountTokensResetMs} (0 for a window not passed).
 */
const PEEK = `
local W = KEYS[1]
local windowMs = tonumber(ARGV[2])
local now = pick(ARGV[1], clock())
redis.call('ZREMRANGEBYSCORE', W, '-inf', now - windowMs)
local out = {redis.call('ZCARD', W), oldestLeavesIn(W, windowMs, now), 0, 0, 0, 0}
local nextKey = 2
for i = 1, 2 do
  if ARGV[2 + i] == '1' then
    local Z, H = KEYS[nextKey], KEYS[nextKey + 1]
    nextKey = nextKey + 2
    out[1 + 2 * i] = tprune(Z, H, now - windowMs)
    out[2 + 2 * i] = oldestLeavesIn(Z, windowMs, now)
  end
end
return out
`;

/**
 * KEYS A T L; ARGV epoch keyId now dayOffsetMs. Returns {balance, reserved, keyReserved, inFlight,
 * spent, now, loaded}; loaded 0 (and balance 0) when the account is not seeded in this epoch (all 0
 * when it is of another epoch).
 */
const SNAPSHOT = `
local A, T, L = KEYS[1], KEYS[2], KEYS[3]
local at = clock()
local now = pick(ARGV[3], at)
if generation(A, tonumber(ARGV[1])) ~= 0 then return {0, 0, 0, 0, 0, now, 0} end
expire(A, T, L, at)
local kf = 'k:' .. ARGV[2] .. ':'
local v = redis.call('HMGET', A, 'bal', 'res', kf .. 'res', kf .. 'n', kf .. 'day', kf .. 'spent', 'rev')
local spent = 0
if spentToday(v[5], dayOf(now, tonumber(ARGV[4]))) == 1 then spent = tonumber(v[6]) or 0 end
local loaded, bal = 1, tonumber(v[1]) or 0
if not v[7] then loaded, bal = 0, 0 end
return {bal, tonumber(v[2]) or 0, tonumber(v[3]) or 0, tonumber(v[4]) or 0, spent, now, loaded}
`;

/**
 * KEYS A; ARGV balance revision credited. Epoch 0 only (a limiter seeded step by step, without a
 * ledger to rebuild from). Only when none was seeded or the seeded revision is older (nodes
 * seeding the same revision at once leave one value). With `credited` (the store's total of the
 * account's credits) on a balance seeded with one too, the balance moves by the change of that
 * total: releases other nodes applied and have not stored yet are kept. Otherwise (the first seed,
 * or no total given) the balance is set. Never adds a balance to a balance. Returns 1 if set, 2 if
 * credited, 0 if older.
 */
const SET_BALANCE = `
local v = redis.call('HMGET', KEYS[1], 'bal', 'rev', 'cred')
if v[2] and tonumber(v[2]) >= tonumber(ARGV[2]) then return 0 end
if ARGV[3] ~= '' and v[1] and v[3] then
  redis.call('HINCRBY', KEYS[1], 'bal', int(tonumber(ARGV[3]) - tonumber(v[3])))
  redis.call('HSET', KEYS[1], 'rev', ARGV[2], 'cred', ARGV[3])
  return 2
end
redis.call('HSET', KEYS[1], 'bal', ARGV[1], 'rev', ARGV[2])
if ARGV[3] ~= '' then redis.call('HSET', KEYS[1], 'cred', ARGV[3]) else redis.call('HDEL', KEYS[1], 'cred') end
return 1
`;

/**
 * KEYS A; ARGV keyId spent now dayOffsetMs. Epoch 0 only (see SET_BALANCE). Sets a key's spending
 * for the billing day of `now` once per day (the :seed field); releases counted before the seed
 * are replaced by the store's figure, which includes them (the store records a settlement before
 * Redis releases it). Returns 1 if set.
 */
const SET_SPENT = `
local kf = 'k:' .. ARGV[1] .. ':'
local day = int(dayOf(pick(ARGV[3], clock()), tonumber(ARGV[4])))
if redis.call('HGET', KEYS[1], kf .. 'seed') == day then return 0 end
redis.call('HSET', KEYS[1], kf .. 'day', day, kf .. 'spent', ARGV[2], kf .. 'seed', day)
return 1
`;

/**
 * KEYS A T L; ARGV epoch leaseMs ticketId... Extends the leases of the tickets still held.
 * Returns how many, or -1 when the account is not in the caller's epoch (check the epoch again).
 */
const RENEW = `
local A, T, L = KEYS[1], KEYS[2], KEYS[3]
if generation(A, tonumber(ARGV[1])) ~= 0 then return -1 end
local at = clock()
expire(A, T, L, at)
local expiry = at + tonumber(ARGV[2])
local renewed = 0
for i = 3, #ARGV do
  if redis.call('HEXISTS', T, ARGV[i]) == 1 then
    redis.call('ZADD', L, expiry, ARGV[i])
    renewed = renewed + 1
  end
end
return renewed
`;

/**
 * KEYS A T L U D; ARGV epoch leaseMs then (ticketId keyId[\nbudget…] reserved)... Records the tickets a node
 * still holds in a new epoch (after Redis lost or rolled back its data): their slots and
 * reservations count again before the account is seeded, so the seed cannot hand their money out
 * twice. A ticket already recorded is skipped. Returns how many were added, -1 if the caller is
 * behind.
 */
const REGISTER = `
local A, T, L, U, D = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local epoch = tonumber(ARGV[1])
local g = generation(A, epoch)
if g < 0 then return -1 end
if g > 0 then enter(A, T, L, U, D, epoch) end
local expiry = clock() + tonumber(ARGV[2])
local added = 0
for i = 3, #ARGV, 3 do
  local id, keyrec, r = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  if redis.call('HEXISTS', T, id) == 0 then
    local key, names = splitKey(keyrec)
    local kf = 'k:' .. key .. ':'
    reserveIn(A, names, r)
    redis.call('HSET', T, id, r .. '|' .. keyrec)
    redis.call('ZADD', L, expiry, id)
    redis.call('HINCRBY', A, 'res', r)
    redis.call('HINCRBY', A, kf .. 'res', r)
    redis.call('HINCRBY', A, kf .. 'n', 1)
    added = added + 1
  end
end
return added
`;

/**
 * KEYS A T L U D; ARGV epoch revision balance day journals... keys... where journals is a count
 * then (journal storedSeq) pairs and keys a count then (keyId spentToday) pairs: the ledger's
 * figures for the account, read in one snapshot. Rebuilds the account from them (a seed in a new
 * epoch, or a reconciliation in the current one):
 * - balance = the ledger's balance minus the debits in U the ledger still lacks (seq above its
 *   stored sequence of that journal); those it holds leave U;
 * - each key's spending in `day` = the ledger's plus what U still lacks for that key and day;
 * - reservations, slots in flight = the sum of the open tickets (T), after expired leases are freed.
 * Returns {1, balanceBefore, balanceAfter, reservedBefore, reservedAfter, spentBefore,
 * spentAfter, seededBefore}, or {-1} when the caller is behind, {-2} when a journal's stored
 * sequence is below the one of the last seed: the figures were read before that seed's (two
 * nodes seeding at once), so they are older and change nothing.
 */
const SEED = `
local A, T, L, U, D = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local epoch, day = tonumber(ARGV[1]), tonumber(ARGV[4])
local g = generation(A, epoch)
if g < 0 then return {-1} end
if g > 0 then enter(A, T, L, U, D, epoch) end
local stored, i = {}, 6
for _ = 1, tonumber(ARGV[5]) do
  local seq = tonumber(ARGV[i + 1])
  local before = redis.call('HGET', A, 'j:' .. ARGV[i])
  if before and tonumber(before) > seq then return {-2} end
  stored[ARGV[i]] = seq
  i = i + 2
end
local ledgerSpent = {}
for _ = 1, tonumber(ARGV[i]) do
  ledgerSpent[ARGV[i + 1]] = tonumber(ARGV[i + 2])
  i = i + 2
end
expire(A, T, L, clock())
local seededBefore = redis.call('HEXISTS', A, 'rev')
local balBefore, resBefore = tonumber(redis.call('HGET', A, 'bal') or '0'), tonumber(redis.call('HGET', A, 'res') or '0')
-- What the ledger lacks: U's debits above its stored sequences.
local owed, keyOwed = 0, {}
local u = redis.call('HGETALL', U)
for j = 1, #u, 2 do
  local sep = string.find(u[j], '|', 1, true)
  local journal, seq = string.sub(u[j], 1, sep - 1), tonumber(string.sub(u[j], sep + 1))
  if seq <= (stored[journal] or 0) then
    redis.call('HDEL', U, u[j])
  else
    local c1 = string.find(u[j + 1], '|', 1, true)
    local c2 = string.find(u[j + 1], '|', c1 + 1, true)
    local cost = tonumber(string.sub(u[j + 1], 1, c1 - 1))
    local key = string.sub(u[j + 1], c1 + 1, c2 - 1)
    owed = owed + cost
    if tonumber(string.sub(u[j + 1], c2 + 1)) == day then keyOwed[key] = (keyOwed[key] or 0) + cost end
  end
end
-- Per key: spending today and reservations start from the ledger and the open tickets.
local spentBefore, spentAfter, keys = 0, 0, {}
for _, f in ipairs(redis.call('HKEYS', A)) do
  if string.find(f, '\\n', 1, true) then
    -- Named after a ticket's whole record (its key and budgets), as seeds once read it: no key's.
    redis.call('HDEL', A, f)
  else
    local key = string.match(f, '^k:(.*):day$')
    if key then keys[key] = true end
    key = string.match(f, '^k:(.*):n$')
    if key then keys[key] = true end
  end
end
for key in pairs(ledgerSpent) do keys[key] = true end
for key in pairs(keyOwed) do keys[key] = true end
local inFlight, keyRes = {}, {}
local tickets = redis.call('HGETALL', T)
local res = 0
for j = 1, #tickets, 2 do
  local sep = string.find(tickets[j + 1], '|', 1, true)
  -- The record's key is followed by its budgets' names (splitKey), as unhold reads it.
  local r, key = tonumber(string.sub(tickets[j + 1], 1, sep - 1)), splitKey(string.sub(tickets[j + 1], sep + 1))
  res = res + r
  keyRes[key] = (keyRes[key] or 0) + r
  inFlight[key] = (inFlight[key] or 0) + 1
  keys[key] = true
end
for key in pairs(keys) do
  local kf = 'k:' .. key .. ':'
  local v = redis.call('HMGET', A, kf .. 'day', kf .. 'spent')
  if spentToday(v[1], day) == 1 then spentBefore = spentBefore + (tonumber(v[2]) or 0) end
  local spent = (ledgerSpent[key] or 0) + (keyOwed[key] or 0)
  spentAfter = spentAfter + spent
  redis.call('HSET', A, kf .. 'day', int(day), kf .. 'spent', int(spent), kf .. 'res', int(keyRes[key] or 0), kf .. 'n', int(inFlight[key] or 0))
end
local bal = tonumber(ARGV[3]) - owed
redis.call('HSET', A, 'bal', int(bal), 'res', int(res), 'rev', ARGV[2])
for journal, seq in pairs(stored) do redis.call('HSET', A, 'j:' .. journal, int(seq)) end
return {1, balBefore, bal, resBefore, res, spentBefore, spentAfter, seededBefore}
`;

/**
 * KEYS G; ARGV epoch run ledger. Begins the epoch (the store has moved its own to it) unless Redis
 * already holds this epoch or a newer one of the same Redis run and ledger. Returns {epoch, since}
 * of the generation Redis holds after it.
 */
const OPEN_EPOCH = `
local G = KEYS[1]
local v = redis.call('HMGET', G, 'epoch', 'run', 'ledger', 'since')
if v[1] and tonumber(v[1]) >= tonumber(ARGV[1]) and v[2] == ARGV[2] and v[3] == ARGV[3] then
  return {tonumber(v[1]), tonumber(v[4])}
end
local since = clock()
redis.call('DEL', G)
redis.call('HSET', G, 'epoch', ARGV[1], 'run', ARGV[2], 'ledger', ARGV[3], 'since', int(since))
return {tonumber(ARGV[1]), since}
`;

/**
 * KEYS G; ARGV epoch node. Records that the node holds all its tickets in the epoch (REGISTER
 * done), if the epoch is still Redis's. Returns {acknowledged, redisMs}.
 */
const ACK_EPOCH = `
local at = clock()
if redis.call('HGET', KEYS[1], 'epoch') ~= ARGV[1] then return {0, at} end
redis.call('HSET', KEYS[1], 'ack:' .. ARGV[2], ARGV[1])
return {1, at}
`;

/** KEYS G. Returns {epoch, run, ledger, since, redisMs, node, ackedEpoch, ...} ('' when absent). */
const READ_EPOCH = `
local v = redis.call('HMGET', KEYS[1], 'epoch', 'run', 'ledger', 'since')
local out = {v[1] or '', v[2] or '', v[3] or '', v[4] or '', tostring(clock())}
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do
  local node = string.match(all[i], '^ack:(.*)$')
  if node then
    out[#out + 1] = node
    out[#out + 1] = all[i + 1]
  end
end
return out
`;

/** A script known by its SHA1; run with EVALSHA, loaded with EVAL when Redis does not have it. */
export class Script {
  readonly source: string;
  readonly sha: string;

  constructor(body: string) {
    this.source = PRELUDE + body;
    this.sha = new Bun.CryptoHasher("sha1").update(this.source).digest("hex");
  }

  async run(client: RedisClient, keys: readonly string[], args: readonly string[]): Promise<unknown> {
    const tail = [String(keys.length), ...keys, ...args];
    try {
      return await client.send("EVALSHA", [this.sha, ...tail]);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith("NOSCRIPT")) throw error;
      return client.send("EVAL", [this.source, ...tail]);
    }
  }
}

/**
 * KEYS B; ARGV name start spent. Seeds a budget's period with the store's figure, unless B already
 * counts this period or a later one (another node seeded it first). Returns 1 if set.
 */
const SET_BUDGET = `
local B = KEYS[1]
local name, start = ARGV[1], tonumber(ARGV[2])
local s = tonumber(redis.call('HGET', B, name .. '|s') or '-1')
if s >= start then return 0 end
redis.call('HSET', B, name .. '|s', ARGV[2], name .. '|p', ARGV[3])
return 1
`;

/**
 * KEYS A B; ARGV name start. Returns {seeded, spent, reserved}: the budget's spending in the
 * period from `start` (0 when B counts an older one) and the reservations counted in it.
 */
const READ_BUDGET = `
local A, B = KEYS[1], KEYS[2]
local name, start = ARGV[1], tonumber(ARGV[2])
local s = redis.call('HGET', B, name .. '|s')
local r = tonumber(redis.call('HGET', A, 'b:' .. name .. ':r') or '0')
if not s then return {0, 0, r} end
local p = 0
if tonumber(s) >= start then p = tonumber(redis.call('HGET', B, name .. '|p') or '0') end
return {1, p, r}
`;

export const SCRIPTS = {
  setBudget: new Script(SET_BUDGET),
  readBudget: new Script(READ_BUDGET),
  acquire: new Script(ACQUIRE),
  register: new Script(REGISTER),
  seed: new Script(SEED),
  openEpoch: new Script(OPEN_EPOCH),
  ackEpoch: new Script(ACK_EPOCH),
  readEpoch: new Script(READ_EPOCH),
  release: new Script(RELEASE),
  cancel: new Script(CANCEL),
  peek: new Script(PEEK),
  snapshot: new Script(SNAPSHOT),
  setBalance: new Script(SET_BALANCE),
  setSpent: new Script(SET_SPENT),
  renew: new Script(RENEW),
} as const;
