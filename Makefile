# AgentHub Desktop. `make run` builds and starts the app; `make test` runs
# every test. Both install what is missing first (scripts/deps.sh).
SHELL := /bin/bash
.DEFAULT_GOAL := run

# Two binaries from the same main package: the CLI (engine, serve, every
# command) without the desktop tags, so it never loads GTK or WebKitGTK, and
# the window beside it, which `agenthub` execs for `agenthub`/`agenthub window`.
BIN       := build/bin/agenthub
WINDOW    := build/bin/agenthub-window
TAGS      := desktop,production,webkit2_41,sqlite_fts5
# Every Go build and test carries sqlite_fts5: the store's search needs SQLite's
# FTS5, and a store opened without it refuses to start (backend/store/search.go).
GOTAGS    := sqlite_fts5
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -s -w -X main.version=$(VERSION)
GOFLAGS   := -buildvcs=false
export GOFLAGS
ARTIFACTS ?= $(CURDIR)/artifacts
# The pinned agent CLIs that scripts/deps.sh test installs, for the runtime
# adapters' end-to-end tests (which fail under CI=true when one is missing).
AGENTHUB_CLAUDE_BIN ?= $(CURDIR)/.cache/agent-clis/node_modules/.bin/claude
export AGENTHUB_CLAUDE_BIN
AGENTHUB_CODEX_BIN ?= $(CURDIR)/.cache/agent-clis/codex/node_modules/.bin/codex
export AGENTHUB_CODEX_BIN
AGENTHUB_GEMINI_BIN ?= $(CURDIR)/.cache/agent-clis/gemini/node_modules/.bin/gemini
export AGENTHUB_GEMINI_BIN

.PHONY: run build deps deps-test frontend go-deps test test-go test-frontend test-e2e test-desktop \
        test-kill bench vet clean

run: deps build
	./$(BIN) $(ARGS)

deps:
	@scripts/deps.sh run

deps-test:
	@scripts/deps.sh test

# Not `npm ci`: npm leaves some foreign-platform optional packages out of the
# lock (npm/cli#4828) and ci then rejects it; install follows the lock anyway.
frontend/node_modules/.package-lock.json: frontend/package-lock.json
	cd frontend && npm install --no-audit --no-fund
	@touch $@

frontend: frontend/node_modules/.package-lock.json
	cd frontend && npm run build

go-deps:
	go mod download

build: frontend go-deps
	go build -trimpath -tags $(GOTAGS) -ldflags "$(LDFLAGS)" -o $(BIN) .
	go build -trimpath -tags $(TAGS) -ldflags "$(LDFLAGS)" -o $(WINDOW) .

vet:
	go vet -tags $(TAGS) ./...
	go vet -tags $(GOTAGS) .

test: deps-test build vet test-go test-frontend test-e2e test-desktop
	@echo "make test: all suites passed"

test-go:
	go test -tags $(GOTAGS) -race -count=1 -timeout 20m ./...

test-frontend: frontend/node_modules/.package-lock.json
	cd frontend && npm run check && npm test

test-e2e: build
	cd frontend && AGENTHUB_BIN=$(CURDIR)/$(BIN) E2E_ARTIFACTS=$(ARTIFACTS)/e2e npm run e2e

test-desktop: build
	AGENTHUB_BIN=$(CURDIR)/$(BIN) SMOKE_ARTIFACTS=$(ARTIFACTS)/desktop \
		go test -tags smoke,$(GOTAGS) -count=1 -timeout 5m -v ./tests/desktop/

# Hundreds of kill -9 points (200 random kills) and the crash-point sweep
# repeated 3 times (every point of the workload, as a crash and as a failed
# write; see docs/RELIABILITY.md), and the WAL under 1,800 short runs.
test-kill:
	AGENTHUB_KILL_ITERATIONS=200 AGENTHUB_CRASH_FULL=1 AGENTHUB_CRASH_REPEAT=3 AGENTHUB_WAL_LOAD=1 go test -tags $(GOTAGS) -count=1 -timeout 60m -run 'Kill|Crash|DiskFull|WALAfterShortRuns' ./backend/...

bench:
	go test -tags $(GOTAGS) -run '^$$' -bench . -benchtime 3x ./backend/store/... ./diffview/... ./workspace/...

clean:
	rm -rf build/bin frontend/dist/assets frontend/dist/index.html $(ARTIFACTS)
