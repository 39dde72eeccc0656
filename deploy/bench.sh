#!/usr/bin/env bash
# API load benchmark (make bench): starts the control plane on a fresh database, then drives it
# from a second process over loopback: POST /v1/checks (seeding 10,000 checks), GET
# /v1/checks/{id}, GET /v1/checks?per_page=100, and the public status page of a page with 50
# components linked to checks with 90 days of daily history. Prints req/s and p50/p99/p99.9.
set -euo pipefail
cd "$(dirname "$0")/.."
./deploy/ensure-services.sh
PGURL=${VANTAGE_BENCH_PG:-postgres://postgres@127.0.0.1:5432}
DB=vantage_bench_$$
ADDR=127.0.0.1:${VANTAGE_BENCH_PORT:-18480}
TOKEN=vtg_bench_$(openssl rand -hex 16)
psql -q "$PGURL/postgres" -c "CREATE DATABASE $DB"
cleanup() {
  [ -n "${CP_PID:-}" ] && kill "$CP_PID" 2>/dev/null && wait "$CP_PID" 2>/dev/null || true
  psql -q "$PGURL/postgres" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" || true
}
trap cleanup EXIT
go build -o bin/vantage-loadtest ./controlplane/cmd/vantage-loadtest
VANTAGE_DATABASE_URL="$PGURL/$DB?sslmode=disable" VANTAGE_SECRET_KEY=$(openssl rand -base64 32) \
VANTAGE_BOOTSTRAP_TOKEN=$TOKEN VANTAGE_HTTP_ADDR=$ADDR VANTAGE_GRPC_ADDR=127.0.0.1:0 VANTAGE_PING_ADDR=127.0.0.1:0 VANTAGE_METRICS_ADDR=127.0.0.1:0 \
VANTAGE_AGENT_TOKEN=$(openssl rand -hex 16) VANTAGE_LOG_LEVEL=warn \
VANTAGE_NATS_URL=${VANTAGE_BENCH_NATS:-nats://127.0.0.1:4222} \
  ./bin/vantage-controlplane serve > /tmp/vantage-bench-cp.log 2>&1 &
CP_PID=$!
for _ in $(seq 1 100); do curl -sf "http://$ADDR/readyz" >/dev/null && break; sleep 0.2; done
curl -sf "http://$ADDR/readyz" >/dev/null || { echo "control plane did not start:"; cat /tmp/vantage-bench-cp.log; exit 1; }
echo "control plane $(git rev-parse --short HEAD 2>/dev/null), $(nproc) cores, PostgreSQL and load generator on the same machine"
./bin/vantage-loadtest -addr "http://$ADDR" -token "$TOKEN" -seed "${VANTAGE_BENCH_SEED:-10000}" \
  -duration "${VANTAGE_BENCH_DURATION:-10s}" -concurrency "${VANTAGE_BENCH_CONCURRENCY:-16}"

# The public status page: 50 components, each linked to a check with 90 days of rollups.
api() { curl -sf -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' "$@"; }
page=$(api -d '{"name":"Bench status","subdomain":"bench"}' "http://$ADDR/v1/status_pages" | python3 -c 'import json,sys; print(json.load(sys.stdin)["result"]["id"])')
psql -qtA "$PGURL/$DB" -c "SELECT id FROM checks ORDER BY id LIMIT 50" | while read -r check; do
  comp=$(api -d "{\"name\":\"Service ${check:0:8}\"}" "http://$ADDR/v1/status_pages/$page/components" | python3 -c 'import json,sys; print(json.load(sys.stdin)["result"]["id"])')
  api -X PATCH -d "{\"check_ids\":[\"$check\"]}" "http://$ADDR/v1/status_pages/$page/components/$comp" >/dev/null
done
psql -q "$PGURL/$DB" -c "INSERT INTO check_daily_stats (org_id, check_id, day, runs, failed_runs)
  SELECT c.org_id, c.id, d::date, 2880, (random() < 0.1)::int * (random() * 30)::int
  FROM (SELECT org_id, id FROM checks ORDER BY id LIMIT 50) c,
       generate_series(current_date - 89, current_date, interval '1 day') d"
./bin/vantage-loadtest -addr "http://$ADDR" -scenarios statuspage -page /status/bench \
  -duration "${VANTAGE_BENCH_DURATION:-10s}" -concurrency "${VANTAGE_BENCH_PAGE_CONCURRENCY:-8}" | tail -n +2
