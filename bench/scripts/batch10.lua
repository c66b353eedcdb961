-- wrk -s bench/scripts/batch10.lua http://127.0.0.1:8080/
-- A batch of 10 add calls per request.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local calls = {}
for i = 1, 10 do
  calls[i] = string.format('{"jsonrpc":"2.0","method":"add","params":[%d,1],"id":%d}', i, i)
end
wrk.body = "[" .. table.concat(calls, ",") .. "]"
