-- wrk script: plain GETs of the URL given on the command line (the token travels as ?token=), and an exact
-- machine-readable summary at the end (bytes and duration straight from wrk, not its rounded Transfer/sec).
-- Shared by every scenario; ranged scenarios set BENCH_RANGE_MODE (see below) in the environment.
--
--   BENCH_RANGE_MODE   unset/"none": no Range header
--                      "open":  Range: bytes=<random offset>-            (offset uniform in [0, BENCH_FILE_SIZE))
--                      "fixed": Range: bytes=<random offset>-<offset+BENCH_RANGE_LENGTH-1>
--   BENCH_FILE_SIZE    the file's length in bytes (ranged modes)
--   BENCH_RANGE_LENGTH the length of each fixed range in bytes ("fixed" mode)
--   BENCH_SEED         seed of the offsets, so both servers are asked for the same sequence per thread

local mode = os.getenv("BENCH_RANGE_MODE") or "none"
local size = tonumber(os.getenv("BENCH_FILE_SIZE") or "0")
local rangeLength = tonumber(os.getenv("BENCH_RANGE_LENGTH") or "1048576")
local seed = tonumber(os.getenv("BENCH_SEED") or "42")

local threadCounter = 0
function setup(thread)
   threadCounter = threadCounter + 1
   thread:set("tid", threadCounter)
end

function init(args)
   math.randomseed(seed + (tid or 0))
   -- The first values of some Lua PRNGs are poorly mixed; discard a few.
   for _ = 1, 10 do math.random() end
end

local function randomOffset(limit)
   -- math.random(m, n) is limited to 2^31 on some Lua builds; combine two draws for large files.
   local hi = math.random(0, 65535)
   local lo = math.random(0, 65535)
   return (hi * 65536 + lo) % limit
end

if mode == "open" then
   request = function()
      local offset = randomOffset(size)
      return wrk.format(nil, nil, { ["Range"] = "bytes=" .. offset .. "-" })
   end
elseif mode == "fixed" then
   request = function()
      local offset = randomOffset(size - rangeLength + 1)
      return wrk.format(nil, nil, { ["Range"] = "bytes=" .. offset .. "-" .. (offset + rangeLength - 1) })
   end
end

function done(summary, latency, requests)
   local e = summary.errors
   io.write(string.format(
      "BENCH_RESULT bytes=%d duration_us=%d requests=%d err_connect=%d err_read=%d err_write=%d err_status=%d err_timeout=%d lat_p50_us=%d lat_p99_us=%d\n",
      summary.bytes, summary.duration, summary.requests, e.connect, e.read, e.write, e.status, e.timeout,
      latency:percentile(50), latency:percentile(99)))
end
