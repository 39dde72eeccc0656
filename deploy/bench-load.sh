#!/usr/bin/env bash
# Whole-pipeline load benchmark (make bench-load): the real control plane and agent with their
# default settings, the machine's PostgreSQL and NATS, local HTTP/TCP/DNS targets, checks
# created through the API; see controlplane/cmd/vantage-benchload for what it measures and
# the VANTAGE_LOAD_* settings (a short run: VANTAGE_LOAD_LEVELS=500 VANTAGE_LOAD_SECONDS=10).
set -euo pipefail
cd "$(dirname "$0")/.."
./deploy/ensure-services.sh
go build -o bin/vantage-benchload ./controlplane/cmd/vantage-benchload
exec ./bin/vantage-benchload
