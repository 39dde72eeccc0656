#!/usr/bin/env bash
# Regenerates every piece of committed generated code:
#   - protobuf Go code from proto/vantage/v1/*.proto (pinned protoc, deploy/protoc-version.sh,
#     and pinned Go plugins);
#   - the query layer controlplane/internal/store/dbsqlc from the migrations and
#     controlplane/internal/store/queries/*.sql (pinned sqlc).
# CI runs it and fails when it leaves a diff (`git diff --exit-code`).
set -euo pipefail
cd "$(dirname "$0")/.."
PROTOC_GEN_GO=v1.36.12     # keep equal to google.golang.org/protobuf in go.mod
PROTOC_GEN_GO_GRPC=v1.5.1
SQLC=v1.31.1
. deploy/protoc-version.sh
bin="$PWD/.vantage/tools"
mkdir -p "$bin"
install() { # binary, module@version: go install only when the pinned version is not there yet
  local stamp="$bin/.$1-${2##*@}"
  [ -x "$bin/$1" ] && [ -e "$stamp" ] && return 0
  GOBIN="$bin" go install "$2" && touch "$stamp"
}
install protoc-gen-go "google.golang.org/protobuf/cmd/protoc-gen-go@$PROTOC_GEN_GO"
install protoc-gen-go-grpc "google.golang.org/grpc/cmd/protoc-gen-go-grpc@$PROTOC_GEN_GO_GRPC"
install sqlc "github.com/sqlc-dev/sqlc/cmd/sqlc@$SQLC"
PATH="$bin:$PATH" protoc -I proto \
  --go_out=proto --go_opt=paths=source_relative \
  --go-grpc_out=proto --go-grpc_opt=paths=source_relative \
  proto/vantage/v1/*.proto
"$bin/sqlc" generate -f controlplane/internal/store/sqlc.yaml
echo "generated: protobuf (proto/vantage/v1), queries (controlplane/internal/store/dbsqlc)"
