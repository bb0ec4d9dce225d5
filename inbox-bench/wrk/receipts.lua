-- wrk script for the example warehouse's POST /receipts: every request carries a new id, and a
-- response counts as acked only as the example publisher would count it: status 200, protocol 1,
-- an id from this run, and "accepted" the JSON boolean true. Prints one "[wrk]" line at the end.

local sent = 0
local threads = {}

-- Runs once per wrk thread, in the main Lua state: gives each thread its own id prefix.
function setup(thread)
  thread:set("prefix", "wrk-" .. os.time() .. "-" .. #threads .. "-")
  table.insert(threads, thread)
end

function init(args)
  acked = 0
  refused = 0
  origin = os.date("!%Y-%m-%dT%H:%M:%SZ")
end

function request()
  sent = sent + 1
  local body = '{"id":"' .. prefix .. sent .. '","qty":7,"origin":"' .. origin .. '"}'
  return wrk.format("POST", "/receipts", {["Content-Type"] = "application/json"}, body)
end

function response(status, headers, body)
  -- wrk does not say which request a response answers; ids are unique to this run and thread,
  -- so an ACK naming an id with this thread's prefix answers one of its requests.
  local id = body:match('"id"%s*:%s*"([^"]*)"')
  if status == 200 and id ~= nil and id:sub(1, #prefix) == prefix
      and body:find('"protocol"%s*:%s*1[,}]') and body:find('"accepted"%s*:%s*true[,}]') then
    acked = acked + 1
  else
    refused = refused + 1
  end
end

function done(summary, latency, requests)
  local acked_total, refused_total = 0, 0
  for _, thread in ipairs(threads) do
    acked_total = acked_total + thread:get("acked")
    refused_total = refused_total + thread:get("refused")
  end
  local seconds = summary.duration / 1e6
  io.write(string.format("[wrk] acked %d refused %d in %.1f s: %.0f acked/s, p99 %.1f ms\n",
      acked_total, refused_total, seconds, acked_total / seconds, latency:percentile(99) / 1e3))
end
