# awf - build, test, benchmark. `make help` lists the targets.
GO      ?= go
BIN     ?= bin/awf
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse --short HEAD 2>/dev/null)
LDFLAGS := -s -w -X github.com/awf-dev/awf/cmd/awf/internal/cli.Version=$(VERSION) \
	-X github.com/awf-dev/awf/cmd/awf/internal/cli.Commit=$(COMMIT)
FUZZTIME ?= 10s

.PHONY: help build release-snapshot cross test test-short race bench bench-process fuzz lint fmt docs clean

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-14s %s\n", $$1, $$2}'

build: ## build bin/awf and bin/awf-temporal beside it (static: runs in any container image, starts faster)
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/awf
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(dir $(BIN))awf-temporal ./cmd/awf/awf-temporal

test: ## run every test with the race detector (what CI runs)
	$(GO) test -race -count=1 ./...

test-short: ## skip the slow end-to-end tests
	$(GO) test -short ./...

bench: ## in-process benchmarks of every package
	$(GO) test -run='^$$' -bench=. -benchmem ./...

bench-process: ## whole-process targets as ratios against same-run baselines (FULL=1 adds 10,000 steps)
	./scripts/bench-process.sh

fuzz: ## run each fuzz target for FUZZTIME
	./scripts/fuzz.sh $(FUZZTIME)

lint: ## vet and formatting
	$(GO) vet ./...
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

fmt: ## format the code
	gofmt -w .

docs: ## regenerate docs/cli-reference.md from the command tree
	UPDATE_GOLDEN=1 $(GO) test ./cmd/awf/internal/cli -run TestReferenceIsCurrent

release-snapshot: ## a whole release in dist/ and the local Docker engine, published nowhere (goreleaser)
	./scripts/release-snapshot.sh

cross: ## build, vet and compile the tests for darwin/arm64, darwin/amd64 and windows/amd64
	./scripts/cross.sh

clean:
	rm -rf bin dist
