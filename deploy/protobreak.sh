#!/usr/bin/env bash
# Fails when proto/vantage/v1/*.proto break wire compatibility with a baseline: the main
# branch's copy by default (PROTO_BASELINE=<git ref> for another, e.g. a release tag). Both are
# compiled by the pinned protoc (deploy/protoc-version.sh) and compared by proto/cmd/protobreak.
# Offline: the baseline comes from git, the checker from the workspace.
set -euo pipefail
cd "$(dirname "$0")/.."
. deploy/protoc-version.sh
baseline="${PROTO_BASELINE:-main}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
if ! git rev-parse --verify --quiet "$baseline^{commit}" >/dev/null; then
  echo "protobreak: baseline $baseline not found; set PROTO_BASELINE to a release tag or branch" >&2
  exit 2
fi
mkdir -p "$tmp/base"
git archive "$baseline" proto/vantage | tar -x -C "$tmp/base"
protoc -I "$tmp/base/proto" --include_imports --descriptor_set_out="$tmp/base.pb" "$tmp"/base/proto/vantage/v1/*.proto
protoc -I proto --include_imports --descriptor_set_out="$tmp/cur.pb" proto/vantage/v1/*.proto
go run ./proto/cmd/protobreak "$tmp/base.pb" "$tmp/cur.pb"
echo "protobreak: proto/ is wire compatible with $baseline"
