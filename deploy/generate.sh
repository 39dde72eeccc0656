#!/usr/bin/env bash
# Regenerates the committed protobuf Go code from proto/vantage/v1/*.proto with Debian's protoc
# and pinned Go plugins. CI can run it and check `git diff --exit-code proto/`.
set -euo pipefail
cd "$(dirname "$0")/.."
PROTOC_GEN_GO=v1.36.12     # keep equal to google.golang.org/protobuf in go.mod
PROTOC_GEN_GO_GRPC=v1.5.1
if ! command -v protoc >/dev/null; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq && $SUDO apt-get install -y -qq protobuf-compiler >/dev/null
fi
bin="$PWD/.vantage/tools"
mkdir -p "$bin"
GOBIN="$bin" go install "google.golang.org/protobuf/cmd/protoc-gen-go@$PROTOC_GEN_GO"
GOBIN="$bin" go install "google.golang.org/grpc/cmd/protoc-gen-go-grpc@$PROTOC_GEN_GO_GRPC"
PATH="$bin:$PATH" protoc -I proto \
  --go_out=proto --go_opt=paths=source_relative \
  --go-grpc_out=proto --go-grpc_opt=paths=source_relative \
  proto/vantage/v1/*.proto
echo "generated: $(ls proto/vantage/v1/*.go | tr '\n' ' ')"
