#!/usr/bin/env bash
# make test-cluster: the proof across hosts (deploy/README.md "The cluster test"). Network
# namespaces need root. Runs are serialized by a lock (the namespaces' names are fixed), and
# whatever a run leaves behind — namespaces and their processes, the bridge, the test's
# PostgreSQL — is removed on exit and before the next run.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

if [ "$(id -u)" != 0 ]; then
  echo "make test-cluster needs root: its hosts are network namespaces" >&2
  exit 1
fi
if ! command -v ip >/dev/null; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq iproute2
fi

exec 9>/tmp/vantage-test-cluster.lock
flock 9

# nats-server at the version the control plane embeds, built once from the module cache.
version=$(cd controlplane && go list -m -f '{{.Version}}' github.com/nats-io/nats-server/v2)
nats_server=$root/.vantage/tools/nats-server-$version
if [ ! -x "$nats_server" ]; then
  mkdir -p .vantage/tools/build
  GOBIN=$root/.vantage/tools/build go install "github.com/nats-io/nats-server/v2@$version"
  mv .vantage/tools/build/nats-server "$nats_server"
fi

dir=$(mktemp -d /tmp/vantage-cluster.XXXXXX)
testpid=
cleanup() {
  local rc=$?
  # Interrupted: end the test binary (a child of go test); its processes die with it.
  if [ -n "$testpid" ] && kill -0 "$testpid" 2>/dev/null; then
    pkill -TERM -P "$testpid" 2>/dev/null || true
    kill "$testpid" 2>/dev/null || true
    sleep 1
  fi
  for ns in $(ip netns list | awk '/^vtc-/ {print $1}'); do
    for pid in $(ip netns pids "$ns"); do kill -9 "$pid" 2>/dev/null || true; done
    ip netns del "$ns" 2>/dev/null || true
    rm -rf "/etc/netns/$ns"
  done
  for link in $(ip -o link show | awk -F': ' '{print $2}' | cut -d@ -f1 | grep '^vtc-' || true); do
    ip link del "$link" 2>/dev/null || true
  done
  if [ -f "$dir/pg/postmaster.pid" ]; then
    kill -9 "$(head -1 "$dir/pg/postmaster.pid")" 2>/dev/null || true
  fi
  if [ "$rc" != 0 ] && [ -d "$dir/logs" ]; then
    rm -rf .vantage/test-cluster-logs && mkdir -p .vantage && cp -r "$dir/logs" .vantage/test-cluster-logs
    echo "test-cluster failed; process logs kept in .vantage/test-cluster-logs" >&2
  fi
  rm -rf "$dir"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

VANTAGE_CLUSTER_DIR=$dir VANTAGE_CLUSTER_BIN=$root/bin VANTAGE_CLUSTER_NATS_SERVER=$nats_server \
  go test -tags cluster -count=1 -timeout 30m -v -run '^TestCluster$' ./controlplane/e2e/cluster/ &
testpid=$!
wait "$testpid"
