-- wrk script for the modelgate benchmark: POST the bench request, optionally at a fixed rate, and
-- print a JSON summary line. Environment: BENCH_BODY_FILE, BENCH_HEADERS ("name: value" lines),
-- BENCH_RATE (requests per second for this wrk thread; 0 or unset = closed loop).
local ffi = require("ffi")
ffi.cdef [[
  typedef struct { long tv_sec; long tv_nsec; } bench_timespec;
  int clock_gettime(int clock, bench_timespec *ts);
]]
local ts = ffi.new("bench_timespec")
local function now_ms()
  ffi.C.clock_gettime(1, ts) -- CLOCK_MONOTONIC
  return tonumber(ts.tv_sec) * 1000 + tonumber(ts.tv_nsec) / 1e6
end

local file = assert(io.open(os.getenv("BENCH_BODY_FILE"), "rb"))
wrk.method = "POST"
wrk.body = file:read("*a")
file:close()
wrk.headers["Content-Type"] = "application/json"
for line in (os.getenv("BENCH_HEADERS") or ""):gmatch("[^\n]+") do
  local name, value = line:match("^([^:]+):%s*(.*)$")
  if name then wrk.headers[name] = value end
end

local rate = tonumber(os.getenv("BENCH_RATE") or "0") or 0
if rate > 0 then
  -- A fixed schedule: each request takes the next slot; wrk waits until that slot (ms resolution).
  local period = 1000 / rate
  local next_slot = nil
  function delay()
    local now = now_ms()
    if next_slot == nil then next_slot = now end
    next_slot = next_slot + period
    local wait = next_slot - now
    if wait < 0 then
      -- Behind schedule: never bank more than 50 ms of missed slots.
      if wait < -50 then next_slot = now - 50 end
      return 0
    end
    return wait
  end
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '\nBENCH_RESULT {"requests":%d,"duration_us":%d,"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
    '"latency_us":{"mean":%.1f,"p50":%d,"p90":%d,"p99":%d,"p999":%d,"max":%d}}\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    latency.mean, latency:percentile(50), latency:percentile(90), latency:percentile(99),
    latency:percentile(99.9), latency.max))
end
