# party — run teams of AI coding agents in tmux panes.

GO      ?= go
BIN     := bin
MOCKS   := claude codex gemini mockagent
# Keep -race on. Two scenarios run side by side (GOMAXPROCS on 2 cores):
# three took 13-14 min instead of 19.5, but real agents under that load
# failed two scenarios of 213 in one run of two.
# The scenarios package alone ran past 25 minutes on a loaded 2-core
# machine once the supervisor's crash and acceptance scenarios came in:
# the hang guard is 60 minutes, inside CI's 90.
# Two real and two mock scenarios at once (2026-11-28) took 25 min but
# failed five scenarios on load: two it stays (docs/contributing.md).
TESTFLAGS ?= -race -count=1 -timeout 60m
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
	$(GO) test $(TESTFLAGS) ./...

.PHONY: short
short: ## run the unit and sim tests only (go test -short), in seconds
	$(GO) test -short ./...

.PHONY: bench
bench: tmux agents ## measure delivery against real tmux, the mock agents and the real ones
	$(GO) test -run '^$$' -bench . -skip 'Real|Accept' -benchtime 50x -count 1 ./...
	$(GO) test -run '^$$' -bench Real -benchtime 20x -count 1 ./scenarios

.PHONY: soak
soak: tmux agents ## run scenarios N times each, beside CPU hogs with HOGS=1: make soak SOAK='real_gemini_literal' N=10 HOGS=1
	@test -n "$(SOAK)" || { echo "make soak: name the scenarios, e.g. make soak SOAK='real_gemini_literal real_gemini_send' N=10 HOGS=1"; exit 2; }
	./.ci/soak -n $(or $(N),10) $(if $(filter 1,$(HOGS)),-hogs) $(SOAK)

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
