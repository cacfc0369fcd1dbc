-- wrk script: POST one RPC operation with a bearer token.
-- Environment: TOKEN, OPERATION, BODY (JSON).
wrk.method = "POST"
wrk.path = "/rpc/v1/" .. os.getenv("OPERATION")
wrk.body = os.getenv("BODY")
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. os.getenv("TOKEN")

local statuses = {}
response = function(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
end

done = function(summary, latency, requests)
  io.write(string.format("p50 %.2f ms  p99 %.2f ms  max %.2f ms\n",
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency.max / 1000))
end
