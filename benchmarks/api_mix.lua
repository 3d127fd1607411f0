-- wrk cross-check of `make bench-api` (same mix; start gunicorn as benchmarks/api_load.py does):
--   wrk -t 2 -c 10 -d 40s --latency -s benchmarks/api_mix.lua http://127.0.0.1:PORT
-- 10 connections, each sending its next request 100 ms after the last answer: about 100/s.
-- the load test's mix at a fixed rate: each connection sends one request every `interval` ms
math.randomseed(os.time())
local interval = 100  -- ms per connection: 10 connections = 100 requests/s
function delay() return interval end
function request()
  local k = math.random()
  local path
  if k < 1/3 then path = "/api/leaderboard/?page=" .. math.random(1, 20)
  elseif k < 2/3 then
    local j = math.random()
    if j < 0.4 then path = "/api/matches/?page=" .. math.random(1, 5)
    elseif j < 0.6 then path = "/api/matches/?page=" .. math.random(1, 2000)
    else path = "/api/matches/?tournament=" .. math.random(1, 50) .. "&page=" .. math.random(1, 40) end
  else path = "/api/matches/" .. math.random(1, 100000) .. "/replay/" end
  return wrk.format("GET", path)
end
