#!/usr/bin/env bash
# Pipeline benchmarks (make bench): the scheduler's publish rate and lateness, ingest's stored
# results per second, and HTTP probes per second next to the raw ceiling of Go's HTTP client
# (both with a new connection per request against a loopback target), each with CPU and RSS.
set -euo pipefail
cd "$(dirname "$0")/.."
./deploy/ensure-services.sh
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
TIMEFMT='      cpu %U s user + %S s sys over %e s wall (%P), max RSS %M KiB'

run() { # name, package dir, benchmark regexp, benchtime
  local name=$1 pkg=$2 re=$3 bt=$4
  go test -c -o "$out/$name.test" "./$pkg" >/dev/null
  echo "== $name ($pkg, -bench '$re' -benchtime $bt)"
  (cd "$pkg" && /usr/bin/time -f "$TIMEFMT" "$out/$name.test" -test.run '^$' -test.bench "$re" -test.benchtime "$bt" -test.benchmem 2>&1) \
    | grep -E '^(Benchmark|      cpu)' || true
}

run scheduler controlplane/internal/scheduler '^BenchmarkScheduler$' "${VANTAGE_BENCH_SCHED:-1x}"
run ingest controlplane/internal/ingest '^BenchmarkIngest$' "${VANTAGE_BENCH_INGEST:-100000x}"
run http-probe agent/internal/prober '^BenchmarkHTTPProbe$' 5s
run raw-http-client agent/internal/prober '^BenchmarkRawHTTPClient$' 5s
