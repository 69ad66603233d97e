# dbtrail — the two commands a new user needs are `make demo` and `make test`.
SHELL := /bin/bash
GO    ?= go
BIN   := bin
# Integration tests start real MariaDB servers. Two test binaries run at once
# (-p 2): the temporal/e2e package (the end-to-end tests, the longest by far) is
# named first so that it starts first and every other package runs, one at a
# time, beside it; within a package, tests that mostly wait (killed workers,
# retry backoff) run two at a time (t.Parallel, -parallel = GOMAXPROCS).
TEST_FLAGS ?= -count=1 -p 2 -timeout 75m
# The console's browser test keeps its screenshots of the main pages here,
# the run's test artifacts (each run overwrites them).
export DBTRAIL_SCREENSHOTS ?= $(CURDIR)/test-artifacts/screenshots

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
	$(GO) test $(TEST_FLAGS) ./temporal/e2e/ ./...

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
