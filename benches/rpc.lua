-- wrk script: POST one RPC operation (or the token endpoint) with a bearer token.
-- Environment:
--   OPERATION   operation name, or "oauth2/token" (PATH overrides the whole path)
--   BODY        the request body, sent as is
--   TOKEN       bearer token (optional)
--   CONTENT     Content-Type (default application/json)
--   MODE        "fixed" (default), "orders" (setOrders with 50 new orders per request),
--               "lots" (a transfer from the next lot of the file LOTS, one id a line) or
--               "weights" (setGreenLotWeight of the next lot of LOTS to 500.000-500.999 kg, a body as
--               benches/distinct.lua builds; OPERATION must be inventory.green.setGreenLotWeight)
--   DESTINATION location id for MODE=lots
wrk.method = "POST"
wrk.path = os.getenv("PATH_OVERRIDE") or ("/rpc/v1/" .. os.getenv("OPERATION"))
wrk.body = os.getenv("BODY")
wrk.headers["Content-Type"] = os.getenv("CONTENT") or "application/json"
local token = os.getenv("TOKEN")
if token and token ~= "" then
  wrk.headers["Authorization"] = "Bearer " .. token
end

local mode = os.getenv("MODE") or "fixed"
local threads = {}
local counter = 0
local lots = {}

setup = function(thread)
  thread:set("thread_id", #threads)
  table.insert(threads, thread)
end

init = function(args)
  -- Set by setup() as a global of this thread's interpreter.
  thread_id = thread_id or 0
  if mode == "lots" or mode == "weights" then
    for line in io.lines(os.getenv("LOTS")) do
      table.insert(lots, line)
    end
    -- Threads start at opposite ends of the list so they rarely meet on one lot.
    counter = math.floor(thread_id * #lots / 2)
  end
end

local skus = {"BENCH-250", "BENCH-500", "BENCH-1000", "BENCH-SAMPLE"}

request = function()
  counter = counter + 1
  if mode == "orders" then
    local items = {}
    for k = 1, 50 do
      items[k] = string.format(
        '{"externalId":"LOAD-%d-%d-%d-%d","orderDate":"2026-11-20T10:00:00Z","customer":"Load customer %d",' ..
        '"customerType":"RETAIL","orderItems":[{"sku":"%s","quantity":%d}]}',
        thread_id, os.time() % 100000, counter, k, k, skus[(k % 4) + 1], (k % 5) + 1)
    end
    return wrk.format(nil, nil, nil, '{"data":[' .. table.concat(items, ",") .. ']}')
  elseif mode == "lots" then
    local lot = lots[(counter % #lots) + 1]
    return wrk.format(nil, nil, nil, string.format(
      '{"data":{"greenLotId":"%s","weight":{"amount":0.001,"unit":"KG"},"destinationLocationId":"%s"}}',
      lot, os.getenv("DESTINATION")))
  elseif mode == "weights" then
    local lot = lots[(counter % #lots) + 1]
    -- A new weight on each pass over the lots (not one fixed weight per lot).
    local grams = 500000 + (math.floor(counter / #lots) % 1000)
    return wrk.format(nil, nil, nil, string.format(
      '{"data":{"greenLotId":"%s","weight":{"amount":%d.%03d,"unit":"KG"}}}',
      lot, math.floor(grams / 1000), grams % 1000))
  end
  return wrk.format()
end

done = function(summary, latency, requests)
  io.write(string.format("RESULT requests=%d duration_us=%d non2xx=%d socket_errors=%d p50_us=%d p99_us=%d max_us=%d\n",
    summary.requests, summary.duration, summary.errors.status,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    latency:percentile(50), latency:percentile(99), latency.max))
end
