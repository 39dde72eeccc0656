# Vantage build. `make help` lists the targets.
SHELL := /bin/bash
MODULES := proto pkg controlplane agent
GO ?= go
# The packages of every module (go.work does not let `./...` cross modules).
PKGS := $(foreach m,$(MODULES),./$(m)/...)

# deploy/kube renders and tests the Kubernetes chart. It links Helm and the Kubernetes API
# types, so it is a module of its own outside go.work (GOWORK=off): the product modules never
# share its dependency versions.
DEPLOY_MODULE := deploy/kube
PODMAN_ENV := CONTAINERS_CONF=$(CURDIR)/deploy/containers.conf

.PHONY: help build run test test-short test-race console-screenshots test-playwright-parity generate lint bench bench-api bench-pipeline bench-agent bench-browser bench-console bench-load bench-scale fuzz tidy clean images test-deploy test-cluster manifests

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

build: ## build bin/vantage-controlplane and bin/vantage-agent
	$(GO) build -o bin/vantage-controlplane ./controlplane/cmd/vantage-controlplane
	$(GO) build -o bin/vantage-agent ./agent/cmd/vantage-agent

run: build ## run Vantage locally: PostgreSQL, NATS, control plane and one agent for all regions
	./deploy/run-local.sh

test: ## run every test against the machine's PostgreSQL, NATS and Chromium
	$(GO) test -count=1 -timeout 30m $(PKGS)

test-short: ## unit tests only, no services (tests needing PostgreSQL, Chromium or processes skip under -short)
	$(GO) test -short -count=1 -timeout 10m $(PKGS)

# The packages whose code runs goroutines that share state: the agent's stream and worker pool,
# the control plane's ingest server, scheduler, evaluator, notifier, fleet and job queue.
RACE_PKGS := ./controlplane/internal/ingest/... ./agent/internal/uplink/... ./agent/internal/worker/... \
	./controlplane/internal/scheduler/... ./controlplane/internal/notifier/... \
	./controlplane/internal/evaluator/... ./controlplane/internal/fleet/... ./controlplane/internal/jobqueue/...

test-race: ## the packages with goroutines under the race detector (RACE_PKGS), with their services
	$(GO) test -race -count=1 -timeout 30m $(RACE_PKGS)

console-screenshots: ## regenerate docs/console/*.png: the console's main views in real Chromium, on a day of judged results
	VANTAGE_CONSOLE_SCREENSHOTS=$(CURDIR)/docs/console $(GO) test -count=1 -run 'TestConsoleViewsWithHistory|TestViews' ./controlplane/internal/console/

test-playwright-parity: ## run the browser-script corpus under real Playwright (npm) and the Go runtime; fail where they disagree
	./agent/internal/browser/pwscript/parity/run.sh

generate: ## regenerate committed code: protobuf (proto/) and the sqlc query layer (store/dbsqlc)
	./deploy/generate.sh

lint: ## golangci-lint (.golangci.yml): the architecture's fences, errcheck, staticcheck, gosec, revive, gofmt
	./deploy/lint.sh

images: ## container images (deploy/images): control plane, agent, NATS; local bases when no registry answers
	$(PODMAN_ENV) ./deploy/images/build.sh

test-deploy: images ## render the Kubernetes chart, check it, and run it under podman kube play (deploy/README.md)
	cd $(DEPLOY_MODULE) && GOWORK=off $(PODMAN_ENV) $(GO) test -count=1 -timeout 20m ./...

test-cluster: build ## run the binaries on hosts made of network namespaces (NATS cluster, 3 control planes, 3 regions) through partitions and kills; needs root (deploy/README.md)
	./deploy/test-cluster.sh

manifests: ## print the Kubernetes manifests: make manifests VALUES=my-values.yaml
	@cd $(DEPLOY_MODULE) && GOWORK=off $(GO) run ./cmd/vantage-render $(if $(VALUES),-f $(abspath $(VALUES)))

bench: bench-api bench-pipeline bench-agent bench-browser bench-console ## every benchmark (see README "Benchmarks")

bench-api: build ## REST API load from a second process: POST, GET by id, list of 100 among 10,000
	./deploy/bench.sh

bench-load: build ## whole pipeline at 1k/5k/10k probes/s and 2x saturation per kind vs a bare Go loop (VANTAGE_LOAD_*: docs/scaling.md)
	./deploy/bench-load.sh

bench-scale: build ## control plane RSS, Go heap and scheduler publish rate/lateness with 100,000 active checks (VANTAGE_SCALE_*: docs/scaling.md)
	./deploy/bench-scale.sh

bench-pipeline: ## scheduler publish rate/lateness, ingest results/s, HTTP probes/s vs raw client
	./deploy/bench-pipeline.sh

bench-agent: ## agent pipeline (fetch, probe, batched results and acks) per HTTP/TCP/DNS/ping/gRPC/WebSocket probe vs a bare loop of the probers; multistep checks/s vs a bare Go loop of the same calls
	$(GO) test -run '^$$' -bench '^BenchmarkPipeline$$' -benchtime $${VANTAGE_BENCH_JOBS:-20000}x -timeout 20m ./agent/internal/worker/
	$(GO) test -run '^$$' -bench '^BenchmarkMultistep$$' -benchtime $${VANTAGE_BENCH_MULTISTEP:-2000}x -timeout 10m ./agent/internal/prober/

bench-browser: ## browser checks/min (URL, and scripted with two page loads), CPU-s/check, MiB/tab vs raw page loads
	VANTAGE_BENCH_SECONDS=$${VANTAGE_BENCH_SECONDS:-20} $(GO) test -run '^$$' -bench '^BenchmarkBrowser$$' -benchtime 1x -timeout 10m ./agent/internal/browser/

bench-console: ## console in Chromium on 10,000 checks with a week of results: overview and 7-day detail ms, /v1 calls, KB vs bare API calls
	$(GO) test -run '^$$' -bench '^BenchmarkConsole$$' -benchtime 1x -timeout 10m ./controlplane/internal/console/

# Every fuzz target, as package:Name. Their seed corpora run as unit tests in `make test`.
FUZZ_TARGETS := ./controlplane/internal/api:FuzzDecode ./pkg/assert:FuzzCompile ./pkg/assert:FuzzEvaluate \
	./pkg/check:FuzzVarRefs ./controlplane/internal/heartbeat:FuzzParseCron ./controlplane/internal/statuspage/web:FuzzRenderPage \
	./controlplane/internal/ingest:FuzzConvertResult
FUZZTIME ?= 60s

fuzz: ## run every fuzz target for FUZZTIME each (default 60s): request bodies of every route, assertion and cron parsers, {{NAME}} resolver, status page renderer, agents' results
	@set -e; for t in $(FUZZ_TARGETS); do pkg=$${t%%:*}; name=$${t##*:}; echo "== $$name ($$pkg)"; \
		$(GO) test $$pkg -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME); done

tidy: ## go mod tidy in every module
	for m in $(MODULES); do (cd $$m && $(GO) mod tidy); done
	cd $(DEPLOY_MODULE) && GOWORK=off $(GO) mod tidy

clean:
	rm -rf bin .vantage
