-- wrk script for the bench: POSTs the body read from $BENCH_BODY_FILE (headers come with -H)
-- and prints one line, "BENCH_RESULT {json}", with the run's summary when it ends.
local path = os.getenv("BENCH_BODY_FILE")
if path == nil or path == "" then
  error("BENCH_BODY_FILE is not set")
end
local file = assert(io.open(path, "rb"))
wrk.method = "POST"
wrk.body = file:read("*a")
file:close()

function done(summary, latency, _requests)
  local e = summary.errors
  io.write(string.format(
    'BENCH_RESULT {"requests":%d,"duration_us":%d,"bytes":%d,' ..
    '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
    '"latency_us":{"min":%d,"mean":%.1f,"max":%d,"stdev":%.1f,"p50":%d,"p90":%d,"p99":%d,"p999":%d}}\n',
    summary.requests, summary.duration, summary.bytes,
    e.connect, e.read, e.write, e.status, e.timeout,
    latency.min, latency.mean, latency.max, latency.stdev,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency:percentile(99.9)))
end
