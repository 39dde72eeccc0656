#!/usr/bin/env bash
# Control-plane memory at scale (make bench-scale): VANTAGE_SCALE_CHECKS active checks (default
# 100,000) written with one COPY, the real control plane loading and scheduling them; prints its
# RSS, Go heap, CPU and the scheduler's publish rate and lateness. See
# controlplane/cmd/vantage-benchscale for the settings (a quick run: VANTAGE_SCALE_CHECKS=10000
# VANTAGE_SCALE_SECONDS=30). With VANTAGE_SCALE_PROFILE=<file> it also saves a heap profile and
# CPU profiles (with checks, and idle) and prints their top entries. GOGC and GOMEMLIMIT, when
# set, reach the control plane.
# VANTAGE_SCALE_REPLICAS=R (or a list, 1,2,3) runs R control planes sharing the shards and
# prints each one's share of the publishing and the CPU per published job, gross and net of
# what the same R replicas burn with no checks; VANTAGE_SCALE_KILL=1 kills one half-way and
# times the others' take-over of its shards.
set -euo pipefail
cd "$(dirname "$0")/.."
./deploy/ensure-services.sh
go build -o bin/vantage-benchscale ./controlplane/cmd/vantage-benchscale
./bin/vantage-benchscale
if [ -n "${VANTAGE_SCALE_PROFILE:-}" ]; then
	for f in "$VANTAGE_SCALE_PROFILE" "$VANTAGE_SCALE_PROFILE".*; do
		[ -f "$f" ] || continue
		echo "== $f"
		case "$f" in
		*cpu) go tool pprof -top -nodecount=25 bin/vantage-controlplane "$f" 2>/dev/null | head -32 ;;
		*) go tool pprof -top -sample_index=inuse_space -nodecount=20 bin/vantage-controlplane "$f" 2>/dev/null | head -28 ;;
		esac
	done
fi
