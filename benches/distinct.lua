-- wrk script: setGreenLotWeight on many distinct lots, one after the other per connection.
-- Environment: TOKEN, LOTS (comma-separated green lot ids).
local lots = {}
for id in string.gmatch(os.getenv("LOTS"), "[^,]+") do
  lots[#lots + 1] = id
end
local counter = 0

request = function()
  counter = counter + 1
  local id = lots[(counter % #lots) + 1]
  local grams = 500000 + (counter % 1000)
  local body = string.format(
    '{"data": {"greenLotId": "%s", "weight": {"amount": %d.%03d, "unit": "KG"}}}',
    id, math.floor(grams / 1000), grams % 1000)
  return wrk.format("POST", "/rpc/v1/inventory.green.setGreenLotWeight", {
    ["Content-Type"] = "application/json",
    ["Authorization"] = "Bearer " .. os.getenv("TOKEN"),
  }, body)
end

done = function(summary, latency, requests)
  io.write(string.format("p50 %.2f ms  p99 %.2f ms  max %.2f ms\n",
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency.max / 1000))
end
