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

# run builds and runs one benchmark, printing its figures, its CPU and RSS, and any failure
# (--- FAIL, panic, FAIL lines); a failing benchmark fails the script with its status. The
# whole output stays in $out/<name>.log.
run() { # name, package dir, benchmark regexp, benchtime
  local name=$1 pkg=$2 re=$3 bt=$4 status=0
  go test -c -o "$out/$name.test" "./$pkg" >/dev/null
  echo "== $name ($pkg, -bench '$re' -benchtime $bt)"
  (cd "$pkg" && /usr/bin/time -f "$TIMEFMT" "$out/$name.test" -test.run '^$' -test.bench "$re" -test.benchtime "$bt" -test.benchmem) \
    >"$out/$name.log" 2>&1 || status=$?
  grep -E '^(Benchmark|      cpu|--- FAIL|FAIL|panic:)|_test\.go:[0-9]+:' "$out/$name.log" || true
  if [ "$status" -ne 0 ]; then
    echo "$name failed (exit $status); its output:" >&2
    cat "$out/$name.log" >&2
    exit "$status"
  fi
}

# ns_per_op prints the ns/op of benchmark name's first result line.
ns_per_op() { awk '/^Benchmark/ { for (i = 1; i < NF; i++) if ($(i+1) == "ns/op") { print $i; exit } }' "$out/$1.log"; }

run scheduler controlplane/internal/scheduler '^BenchmarkScheduler$' "${VANTAGE_BENCH_SCHED:-1x}"
run ingest controlplane/internal/ingest '^BenchmarkIngest$' "${VANTAGE_BENCH_INGEST:-100000x}"
run http-probe agent/internal/prober '^BenchmarkHTTPProbe$' 5s
run raw-http-client agent/internal/prober '^BenchmarkRawHTTPClient$' 5s
# The HTTP prober against its ceiling measured in this run: probes/s as a fraction of the raw
# client's requests/s (both a new connection per request to the same loopback target).
probe=$(ns_per_op http-probe) raw=$(ns_per_op raw-http-client)
if [ -z "$probe" ] || [ -z "$raw" ]; then echo "no ns/op figure for http-probe or raw-http-client" >&2; exit 1; fi
awk -v p="$probe" -v r="$raw" 'BEGIN { printf "== http-probe vs raw-http-client: %.0f vs %.0f probes/s, ratio %.2f of the raw client\n", 1e9/p, 1e9/r, r/p }'
