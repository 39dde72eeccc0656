#!/usr/bin/env bash
# `make lint`: golangci-lint (.golangci.yml: the architecture's fences, errcheck, staticcheck,
# gosec, revive, …) over the product modules and over the deployment module (its own go.mod).
# The linter is pinned and built into .vantage/tools on first use. Then the .proto files are
# checked for breaking changes against the main branch (deploy/protobreak.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
GOLANGCI_LINT=v2.15.0
bin="$PWD/.vantage/tools"
stamp="$bin/.golangci-lint-$GOLANGCI_LINT"
if [ ! -x "$bin/golangci-lint" ] || [ ! -e "$stamp" ]; then
  mkdir -p "$bin"
  GOBIN="$bin" go install "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$GOLANGCI_LINT"
  touch "$stamp"
fi
"$bin/golangci-lint" run ./proto/... ./pkg/... ./controlplane/... ./agent/...
# The cluster test is behind a build tag (make test-cluster).
"$bin/golangci-lint" run --build-tags cluster ./controlplane/e2e/cluster/...
(cd deploy/kube && GOWORK=off "$bin/golangci-lint" run --config ../../.golangci.yml ./...)
./deploy/protobreak.sh
