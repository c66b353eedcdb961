-- wrk -s bench/scripts/add.lua http://127.0.0.1:8080/
-- One JSON-RPC call per request: add [1,2] → 3.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}'
