# party — run teams of AI coding agents in tmux panes.

GO      ?= go
BIN     := bin
MOCKS   := claude codex gemini mockagent
# make test: every package but the scenarios under -race, then the
# scenarios without it. The scenarios run party, its daemons, hooks and
# mocks thousands of times as processes; those took nine tenths of the
# CPU in a 4-minute sample of a run, and a -race binary starts ~5x slower and runs 2-10x
# slower (35 mock scenarios, talk_*, send_claude* and some supervise_*:
# 199 s under -race, 119 s without). The race detector still runs on
# every package's own tests (the supervisor's loop, the stores, the
# waits, the sim); make race runs the scenarios under it too. Two
# scenarios run side by side (GOMAXPROCS on 2 cores): docs/contributing.md
# says why not more.
# The hang guard is 60 minutes, inside CI's 90.
TESTFLAGS ?= -count=1 -timeout 60m
SCENARIOS := github.com/partyhq/party/scenarios
# A -race binary sleeps 1 s at exit (atexit_sleep_ms) unless told not to.
export GORACE ?= atexit_sleep_ms=0
# Linters, pinned; go run fetches them through the module proxy, so CI
# needs nothing but Go. staticcheck 2026.2.2 knows Go 1.26.
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
ERRCHECK    := github.com/kisielk/errcheck@v1.30.0

.DEFAULT_GOAL := help

.PHONY: help
help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %-8s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: build
build: ## build party into bin/ and the mock agents into bin/mock/
	$(GO) build -o $(BIN)/party ./cmd/party
	$(GO) build -o $(BIN)/mock/mockagent ./cmd/mockagent
	@for m in claude codex gemini; do cp -f $(BIN)/mock/mockagent $(BIN)/mock/$$m; done

.PHONY: tmux
tmux: ## check for tmux, installing it where that is possible
	@./.ci/need-tmux

.PHONY: demo
demo: tmux build ## run a party of mock agents on a private tmux server
	$(BIN)/party demo --mock-dir $(BIN)/mock

.PHONY: agents
agents: ## install the pinned real agents (claude, codex, gemini) into ~/.cache/party/agents
	@./.ci/need-agents

.PHONY: test
test: tmux agents ## run every test, tmux scenarios and real agents included
	$(GO) test -race $(TESTFLAGS) $$($(GO) list ./... | grep -vx '$(SCENARIOS)')
	$(GO) test $(TESTFLAGS) $(SCENARIOS)

.PHONY: race
race: tmux agents ## make test with the scenarios under -race too (slower: ~32 min on 2 cores)
	$(GO) test -race $(TESTFLAGS) ./...

.PHONY: short
short: ## run the unit and sim tests only (go test -short), in seconds
	$(GO) test -short ./...

.PHONY: bench
bench: tmux agents ## measure delivery against real tmux, the mock agents and the real ones
	$(GO) test -run '^$$' -bench . -skip 'Real|Accept|UsageHistory' -benchtime 50x -count 1 ./...
	$(GO) test -run '^$$' -bench Real -benchtime 20x -count 1 ./scenarios

.PHONY: bench-supervise
bench-supervise: tmux agents ## the supervisor's cost as its history and fleet grow (issue 40's figures), kept in docs/results/bench-supervise.txt
	@mkdir -p docs/results
	{ echo "# make bench-supervise at $$(git rev-parse --short HEAD), $$(date -u +%FT%TZ), $$(nproc) cores, $$(tmux -V)"; \
	  $(GO) test -run '^$$' -bench '^BenchmarkTrigger$$' -benchtime 20x -count 1 ./scenarios && \
	  $(GO) test -run '^$$' -bench '^Benchmark(TriggerHistory|SupervisorIdle|SupervisorWaiting|WaitersIdle)$$' -benchtime 1x -count 1 -timeout 40m ./scenarios && \
	  $(GO) test -run '^$$' -bench '^BenchmarkStoreHistory$$' -benchtime 200x -count 1 ./core/supervise; } > docs/results/bench-supervise.txt.new
	mv docs/results/bench-supervise.txt.new docs/results/bench-supervise.txt
	cat docs/results/bench-supervise.txt

.PHONY: bench-worktree
bench-worktree: tmux agents ## party start --worktree on 10,000 files next to a plain start, and party diff --json; kept in docs/results/bench-worktree.txt
	@mkdir -p docs/results
	{ echo "# make bench-worktree at $$(git rev-parse --short HEAD), $$(date -u +%FT%TZ), $$(nproc) cores, $$(git --version)"; \
	  $(GO) test -run '^$$' -bench '^BenchmarkWorktree$$' -benchtime 1x -count 1 ./scenarios; } > docs/results/bench-worktree.txt.new
	mv docs/results/bench-worktree.txt.new docs/results/bench-worktree.txt
	cat docs/results/bench-worktree.txt

.PHONY: bench-usage
bench-usage: tmux ## party usage --all over 200 teams with 1 GB of claude transcripts: the first run and a second after one more response; kept in docs/results/bench-usage.txt
	@mkdir -p docs/results
	{ echo "# make bench-usage at $$(git rev-parse --short HEAD), $$(date -u +%FT%TZ), $$(nproc) cores"; \
	  $(GO) test -run '^$$' -bench '^BenchmarkUsageHistory$$' -benchtime 3x -count 1 -timeout 30m ./scenarios; } > docs/results/bench-usage.txt.new
	mv docs/results/bench-usage.txt.new docs/results/bench-usage.txt
	cat docs/results/bench-usage.txt

.PHONY: bench-mcp
bench-mcp: tmux agents ## an inbox_read tool call through a connected party mcp next to party inbox read run as a process (10 messages); kept in docs/results/bench-mcp.txt
	@mkdir -p docs/results
	{ echo "# make bench-mcp at $$(git rev-parse --short HEAD), $$(date -u +%FT%TZ), $$(nproc) cores, $$(tmux -V)"; \
	  $(GO) test -run '^$$' -bench '^BenchmarkMCPInboxRead$$' -benchtime 50x -count 1 ./scenarios; } > docs/results/bench-mcp.txt.new
	mv docs/results/bench-mcp.txt.new docs/results/bench-mcp.txt
	cat docs/results/bench-mcp.txt

.PHONY: bench-hosts
bench-hosts: tmux ## talk --wait to a mock agent on another host (three real sshds on loopback) next to one here, and party dash --once over the 3 hosts; kept in docs/results/bench-hosts.txt
	@mkdir -p docs/results
	{ echo "# make bench-hosts at $$(git rev-parse --short HEAD), $$(date -u +%FT%TZ), $$(nproc) cores, $$(tmux -V), $$(ssh -V 2>&1)"; \
	  $(GO) test -run '^$$' -bench '^BenchmarkHosts$$' -benchtime 20x -count 1 -timeout 20m ./scenarios; } > docs/results/bench-hosts.txt.new
	mv docs/results/bench-hosts.txt.new docs/results/bench-hosts.txt
	cat docs/results/bench-hosts.txt

.PHONY: soak
soak: tmux agents ## run scenarios N times each, beside CPU hogs with HOGS=1, under -race with RACE=1: make soak SOAK='real_gemini_literal' N=10 HOGS=1
	@test -n "$(SOAK)" || { echo "make soak: name the scenarios, e.g. make soak SOAK='real_gemini_literal real_gemini_send' N=10 HOGS=1"; exit 2; }
	./.ci/soak -n $(or $(N),10) $(if $(filter 1,$(HOGS)),-hogs) $(if $(filter 1,$(RACE)),-race) $(SOAK)

.PHONY: docs
docs: ## regenerate docs/commands/ (from the cobra commands) and docs/exit-codes.md (from the error table)
	$(GO) run ./cmd/party/gendocs

.PHONY: accept
accept: tmux agents ## the supervisor's acceptance run on the real agents, default and short timeouts; figures to docs/results/
	PARTY_ACCEPT_RESULTS=$(CURDIR)/docs/results $(GO) test -run '^$$' -bench '^BenchmarkAccept$$' -benchtime 1x -count 1 -timeout 60m ./scenarios

.PHONY: lint
lint: ## gofmt, go vet, staticcheck, errcheck, and go mod tidy leaving no diff
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...
	$(GO) run $(ERRCHECK) -exclude .errcheck-excludes ./...
	$(GO) mod tidy -diff

.PHONY: clean
clean: ## remove bin/
	rm -rf $(BIN)
