#!/usr/bin/env bash
# Whole-process figures: per-step overhead of a 50-step workflow, awf validate, peak memory with
# a 10 MB step output. The benchmarks build and run the real binary.
set -euo pipefail
cd "$(dirname "$0")/.."
go test -run='^$' -bench='^BenchmarkProcess' -benchtime=${BENCHTIME:-5x} ./cmd/awf
