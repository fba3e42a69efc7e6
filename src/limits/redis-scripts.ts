// The Redis limiter's server-side steps: one Lua script per operation, each run atomically by Redis
// (EVALSHA, reloaded with EVAL when the server answers NOSCRIPT after a restart or SCRIPT FLUSH).
// Every script reads the clock with TIME; the window and the billing day use the caller's `now`
// instead only when one is passed (the contract tests' clock). Lease expiry always uses Redis time.
//
// Keys of one account (all in the `{acct:N}` hash slot, redis-keys.ts):
//   A  hash  bal, res, rev; per key k:<keyId>:n (in flight), :res (reserved), :day, :spent, :seed
//   T  hash  ticket id -> "<reserved>|<keyId>" for every admission not yet released or expired
//   L  zset  ticket id scored by its lease expiry (Redis ms); renewed by the holder's heartbeat
//   D  zset  released (or cancelled) ticket ids scored by that time, kept `doneMs` so a replay
//            changes nothing
//   W  zset  one key's admissions in the RPM window (member ticket id, score admission ms); written
//            only for keys with an RPM limit, so it never holds more than the limit
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
-- Frees the slot and the reservation of a ticket if it still holds them, and drops its lease.
local function unhold(A, T, L, id)
  local rec = redis.call('HGET', T, id)
  if rec then
    local sep = string.find(rec, '|', 1, true)
    local r = tonumber(string.sub(rec, 1, sep - 1))
    local kf = 'k:' .. string.sub(rec, sep + 1) .. ':'
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
`;

/**
 * KEYS A T L W D; ARGV ticketId keyId rpm concurrency cap reserve now windowMs leaseMs dayOffsetMs
 * (-1 = no limit, '' now = Redis time). Returns {admitted, refusal, count, resetMs, balance,
 * accountReserved, keyReserved, spent, now, loaded}; refusal 1 rpm, 2 concurrency, 3 balance, 4 cap,
 * 5 the ticket id was already cancelled (its caller gave up; see CANCEL), with nothing changed.
 */
const ACQUIRE = `
local A, T, L, W, D = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local id, key = ARGV[1], ARGV[2]
local rpm, conc, cap, reserve = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local windowMs, leaseMs, offsetMs = tonumber(ARGV[8]), tonumber(ARGV[9]), tonumber(ARGV[10])
local at = clock()
if redis.call('ZSCORE', D, id) then return {0, 5, 0, 0, 0, 0, 0, 0, at, 0} end
local now = pick(ARGV[7], at)
expire(A, T, L, at)
redis.call('ZREMRANGEBYSCORE', W, '-inf', now - windowMs)
local count = redis.call('ZCARD', W)
local kf = 'k:' .. key .. ':'
local v = redis.call('HMGET', A, 'bal', 'res', 'rev', kf .. 'n', kf .. 'res', kf .. 'day', kf .. 'spent')
local bal, res, loaded = tonumber(v[1]) or 0, tonumber(v[2]) or 0, v[3] and 1 or 0
if loaded == 0 then bal = 0 end
local n, kres = tonumber(v[4]) or 0, tonumber(v[5]) or 0
local spent = 0
if spentToday(v[6], dayOf(now, offsetMs)) == 1 then spent = tonumber(v[7]) or 0 end
local refusal = 0
if rpm >= 0 and count >= rpm then refusal = 1
elseif conc >= 0 and n >= conc then refusal = 2
elseif res + reserve > bal then refusal = 3
elseif cap >= 0 and spent + kres + reserve > cap then refusal = 4 end
if refusal ~= 0 then
  return {0, refusal, count, oldestLeavesIn(W, windowMs, now), bal, res, kres, spent, now, loaded}
end
if rpm >= 0 then
  redis.call('ZADD', W, now, id)
  redis.call('PEXPIRE', W, windowMs)
end
redis.call('HINCRBY', A, 'res', ARGV[6])
redis.call('HINCRBY', A, kf .. 'res', ARGV[6])
redis.call('HINCRBY', A, kf .. 'n', 1)
redis.call('HSET', T, id, ARGV[6] .. '|' .. key)
redis.call('ZADD', L, at + leaseMs, id)
return {1, 0, count + 1, oldestLeavesIn(W, windowMs, now), bal, res + reserve, kres + reserve, spent, now, loaded}
`;

/**
 * KEYS A T L D; ARGV ticketId keyId cost now dayOffsetMs doneMs. Frees the ticket's slot and
 * reservation if it still holds them, debits the cost and counts it as spent in the day of `now` —
 * once per ticket id: a replay finds the id in D and changes nothing (returns 0). A ticket whose
 * lease expired is still debited (its reservation was already freed).
 */
const RELEASE = `
local A, T, L, D = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local id, key, cost = ARGV[1], ARGV[2], ARGV[3]
local at = clock()
local now = pick(ARGV[4], at)
if redis.call('ZSCORE', D, id) then return 0 end
unhold(A, T, L, id)
redis.call('HINCRBY', A, 'bal', int(-tonumber(cost)))
local kf = 'k:' .. key .. ':'
local day = dayOf(now, tonumber(ARGV[5]))
if spentToday(redis.call('HGET', A, kf .. 'day'), day) == 1 then
  redis.call('HINCRBY', A, kf .. 'spent', cost)
else
  redis.call('HSET', A, kf .. 'day', int(day), kf .. 'spent', cost)
end
redis.call('ZADD', D, at, id)
redis.call('ZREMRANGEBYSCORE', D, '-inf', at - tonumber(ARGV[6]))
return 1
`;

/**
 * KEYS A T L D W; ARGV ticketId doneMs. Undoes an admission whose caller gave up waiting for the
 * answer (the acquire timed out on the node's side): frees its slot and reservation and takes it
 * out of the RPM window, if the acquire ran; either way the id is marked done, so an acquire that
 * runs after this (reordered behind a script reload) refuses (5) and a release changes nothing.
 * Returns 1, or 0 when the id was already done.
 */
const CANCEL = `
local A, T, L, D, W = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local id = ARGV[1]
local at = clock()
if redis.call('ZSCORE', D, id) then return 0 end
unhold(A, T, L, id)
redis.call('ZREM', W, id)
redis.call('ZADD', D, at, id)
redis.call('ZREMRANGEBYSCORE', D, '-inf', at - tonumber(ARGV[2]))
return 1
`;

/** KEYS W; ARGV now windowMs. Returns {count, resetMs}. */
const PEEK = `
local W = KEYS[1]
local windowMs = tonumber(ARGV[2])
local now = pick(ARGV[1], clock())
redis.call('ZREMRANGEBYSCORE', W, '-inf', now - windowMs)
return {redis.call('ZCARD', W), oldestLeavesIn(W, windowMs, now)}
`;

/** KEYS A T L; ARGV keyId now dayOffsetMs. Returns {balance, reserved, keyReserved, inFlight, spent, now}. */
const SNAPSHOT = `
local A, T, L = KEYS[1], KEYS[2], KEYS[3]
local at = clock()
local now = pick(ARGV[2], at)
expire(A, T, L, at)
local kf = 'k:' .. ARGV[1] .. ':'
local v = redis.call('HMGET', A, 'bal', 'res', kf .. 'res', kf .. 'n', kf .. 'day', kf .. 'spent', 'rev')
local spent = 0
if spentToday(v[5], dayOf(now, tonumber(ARGV[3]))) == 1 then spent = tonumber(v[6]) or 0 end
local bal = tonumber(v[1]) or 0
if not v[7] then bal = 0 end
return {bal, tonumber(v[2]) or 0, tonumber(v[3]) or 0, tonumber(v[4]) or 0, spent, now}
`;

/**
 * KEYS A; ARGV balance revision credited. Only when none was seeded or the seeded revision is older
 * (nodes seeding the same revision at once leave one value). With `credited` (the store's total of
 * the account's credits) on a balance seeded with one too, the balance moves by the change of that
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
 * KEYS A; ARGV keyId spent now dayOffsetMs. Sets a key's spending for the billing day of `now` once
 * per day (the :seed field); releases counted before the seed are replaced by the store's figure,
 * which includes them (the store records a settlement before Redis releases it). Returns 1 if set.
 */
const SET_SPENT = `
local kf = 'k:' .. ARGV[1] .. ':'
local day = int(dayOf(pick(ARGV[3], clock()), tonumber(ARGV[4])))
if redis.call('HGET', KEYS[1], kf .. 'seed') == day then return 0 end
redis.call('HSET', KEYS[1], kf .. 'day', day, kf .. 'spent', ARGV[2], kf .. 'seed', day)
return 1
`;

/** KEYS A T L; ARGV leaseMs ticketId... Extends the leases of the tickets still held. Returns how many. */
const RENEW = `
local A, T, L = KEYS[1], KEYS[2], KEYS[3]
local at = clock()
expire(A, T, L, at)
local expiry = at + tonumber(ARGV[1])
local renewed = 0
for i = 2, #ARGV do
  if redis.call('HEXISTS', T, ARGV[i]) == 1 then
    redis.call('ZADD', L, expiry, ARGV[i])
    renewed = renewed + 1
  end
end
return renewed
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

export const SCRIPTS = {
  acquire: new Script(ACQUIRE),
  release: new Script(RELEASE),
  cancel: new Script(CANCEL),
  peek: new Script(PEEK),
  snapshot: new Script(SNAPSHOT),
  setBalance: new Script(SET_BALANCE),
  setSpent: new Script(SET_SPENT),
  renew: new Script(RENEW),
} as const;
