# dbtrail — the two commands a new user needs are `make demo` and `make test`.
SHELL := /bin/bash
GO    ?= go
BIN   := bin
# Integration tests start real MariaDB servers; on 2 cores one package at a time
# keeps them from starving each other.
TEST_FLAGS ?= -count=1 -p 1 -timeout 75m

.PHONY: all deps build test vet demo bench clean

all: build

deps:
	@bash scripts/install-deps.sh

build:
	$(GO) build -o $(BIN)/dbtrail ./cmd/dbtrail
	$(GO) build -o $(BIN)/dbtrail-testenv ./cmd/dbtrail-testenv
	$(GO) build -o $(BIN)/dbtrail-demo ./cmd/dbtrail-demo

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...

# All tests, unit and integration (real MariaDB, real mydumper). In CI
# (CI=true) an integration test whose server cannot start fails.
test: deps vet
	$(GO) test $(TEST_FLAGS) ./...

# The main job on the embedded default: source + index MariaDB, dbtrail dev
# (embedded Temporal + UI, worker, capture), a little traffic and a first full
# backup. Ctrl-C stops it; state stays in .dbtrail/demo.
demo: deps build
	$(BIN)/dbtrail-demo --dir .dbtrail/demo

# Benchmarks; writes bench-results/results.md.
bench: deps build
	$(GO) run ./cmd/dbtrail-bench --out bench-results/results.md

clean:
	rm -rf $(BIN)
