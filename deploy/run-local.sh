#!/usr/bin/env bash
# Runs Vantage locally (make run): PostgreSQL (the machine's, started or installed when needed),
# the control plane with an embedded NATS server of its own (loopback, a free port, a password),
# and one agent serving all eight regions. Prints the API address, a token and a console link
# that signs in. The two processes' JSON logs go to .vantage/controlplane.log and .vantage/agent.log
# only, so the terminal keeps just that banner. Ctrl-C stops everything and exits 0. Secrets for
# this checkout persist in .vantage/local.env.
set -euo pipefail
cd "$(dirname "$0")/.."
./deploy/ensure-services.sh

PGURL=${VANTAGE_LOCAL_PG:-postgres://postgres@127.0.0.1:5432}
DB=${VANTAGE_LOCAL_DB:-vantage}
HTTP_ADDR=${VANTAGE_HTTP_ADDR:-127.0.0.1:8080}
GRPC_ADDR=${VANTAGE_GRPC_ADDR:-127.0.0.1:9090}
PING_ADDR=${VANTAGE_PING_ADDR:-127.0.0.1:8082}
mkdir -p .vantage
if [ ! -f .vantage/local.env ]; then
  umask 077
  cat > .vantage/local.env <<ENV
VANTAGE_SECRET_KEY=$(openssl rand -base64 32)
VANTAGE_BOOTSTRAP_TOKEN=vtg_local_$(openssl rand -hex 16)
VANTAGE_AGENT_TOKEN=agent_$(openssl rand -hex 16)
ENV
fi
# The embedded NATS server's password, shared by the control plane and the local agent (added
# to a local.env made before it existed).
grep -q '^VANTAGE_NATS_EMBEDDED_PASSWORD=' .vantage/local.env \
  || (umask 077; echo "VANTAGE_NATS_EMBEDDED_PASSWORD=nats_$(openssl rand -hex 16)" >> .vantage/local.env)
set -a; . ./.vantage/local.env; set +a
psql -q "$PGURL/postgres" -tc "SELECT 1 FROM pg_database WHERE datname = '$DB'" | grep -q 1 \
  || psql -q "$PGURL/postgres" -c "CREATE DATABASE $DB"

[ -x bin/vantage-controlplane ] && [ -x bin/vantage-agent ] || make build
export VANTAGE_DATABASE_URL="$PGURL/$DB?sslmode=disable" VANTAGE_HTTP_ADDR="$HTTP_ADDR" VANTAGE_GRPC_ADDR="$GRPC_ADDR" VANTAGE_PING_ADDR="$PING_ADDR"
# free_port prints the first port from $1 up on which nothing answers on loopback, so that a
# second `make run` on the machine gets its own NATS and metrics ports.
free_port() { local p=$1; while (exec 3<>/dev/tcp/127.0.0.1/"$p") 2>/dev/null; do p=$((p + 1)); done; echo "$p"; }
# NATS: VANTAGE_NATS_URL when given; otherwise the control plane embeds a server of this run
# (its job stream shared with nobody), on loopback, with the password from local.env.
if [ -z "${VANTAGE_NATS_URL:-}" ]; then
  NATS_ADDR=${VANTAGE_NATS_EMBEDDED_ADDR:-127.0.0.1:$(free_port 14222)}
  export VANTAGE_NATS_EMBEDDED_ADDR="$NATS_ADDR" VANTAGE_NATS_EMBEDDED_USER=vantage
  AGENT_NATS_URL="nats://vantage:$VANTAGE_NATS_EMBEDDED_PASSWORD@$NATS_ADDR"
else
  AGENT_NATS_URL=$VANTAGE_NATS_URL
fi
CP_METRICS_ADDR=${VANTAGE_METRICS_ADDR:-127.0.0.1:$(free_port 9100)}
AGENT_METRICS_ADDR=127.0.0.1:$(free_port $((${CP_METRICS_ADDR##*:} + 1)))

pids=()
# stop ends both processes and waits for them. Ctrl-C (SIGINT to the whole process group) or
# SIGTERM is the ordinary way to stop a local run, so it exits 0; the processes stopping on their
# own is a failure, reported with the log to read.
stop() { trap - EXIT INT TERM; kill "${pids[@]}" 2>/dev/null || true; wait "${pids[@]}" 2>/dev/null || true; }
trap 'stop' EXIT
trap 'echo; echo "  Stopping Vantage (logs kept in .vantage/)."; stop; exit 0' INT TERM
VANTAGE_METRICS_ADDR="$CP_METRICS_ADDR" ./bin/vantage-controlplane serve 2>.vantage/controlplane.log >&2 & pids+=($!)
for _ in $(seq 1 100); do curl -sf "http://$HTTP_ADDR/readyz" >/dev/null && break; sleep 0.2; done
curl -sf "http://$HTTP_ADDR/readyz" >/dev/null || { echo "control plane did not become ready; see .vantage/controlplane.log" >&2; tail -n 20 .vantage/controlplane.log >&2; exit 1; }
VANTAGE_CONTROLPLANE_ADDR="$GRPC_ADDR" VANTAGE_REGIONS=all VANTAGE_HTTP_ADDR=127.0.0.1:8081 \
  VANTAGE_NATS_URL="$AGENT_NATS_URL" VANTAGE_METRICS_ADDR="$AGENT_METRICS_ADDR" \
  ./bin/vantage-agent 2>.vantage/agent.log >&2 & pids+=($!)

# A one-time link that signs the browser in to the console with the token below.
CONSOLE_LINK=$(VANTAGE_CONSOLE_TOKEN="$VANTAGE_BOOTSTRAP_TOKEN" ./bin/vantage-controlplane admin console-link \
  --base "http://$HTTP_ADDR" --expires 1h 2>/dev/null) || CONSOLE_LINK="(admin console-link failed; sign in at http://$HTTP_ADDR/console/ with the token)"

cat <<MSG

  Vantage is running.
    Console: $CONSOLE_LINK   (signs in once; later: http://$HTTP_ADDR/console/ with the token)
    API:    http://$HTTP_ADDR/v1   (OpenAPI: http://$HTTP_ADDR/v1/openapi.json)
    Pings:  http://$PING_ADDR/{heartbeat_id}
    Metrics: http://$CP_METRICS_ADDR/metrics (control plane), http://$AGENT_METRICS_ADDR/metrics (agent)
    NATS:   ${VANTAGE_NATS_EMBEDDED_ADDR:-$VANTAGE_NATS_URL} (user vantage, password in .vantage/local.env)
    Token:  $VANTAGE_BOOTSTRAP_TOKEN
  Try:
    curl -s -H "Authorization: Bearer $VANTAGE_BOOTSTRAP_TOKEN" -H 'Content-Type: application/json' \\
      -d '{"name":"example","url":"https://example.com"}' http://$HTTP_ADDR/v1/checks
  Logs (JSON, not shown here): .vantage/controlplane.log, .vantage/agent.log
    follow them with: tail -f .vantage/controlplane.log .vantage/agent.log
  Ctrl-C stops everything.

MSG
# Runs until Ctrl-C (the INT trap exits 0) or until a process ends on its own, which is a failure.
set +e
wait -n "${pids[@]}"
status=$?
echo "a Vantage process stopped (status $status); see .vantage/controlplane.log and .vantage/agent.log" >&2
exit 1
