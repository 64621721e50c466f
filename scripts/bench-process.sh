#!/usr/bin/env bash
# Whole-process figures, measured from outside the process against baselines taken in the same
# run (scripts/procbench): start-up against /bin/true (with two floors: an empty Go program and one
# linking awf's dependencies), per-step cost at 50 and 2,000 steps (and
# 10,000 with FULL=1: its run and validate, peak RSS included), 50 steps against a bare sh loop,
# a sandboxed tool call against a plain step, peak RSS with a 10 MB output against a trivial
# run and of `awf audit` over a 50,000-record log against a 500-record one, refusing deeply
# nested YAML. Each target is one line: target, min and median, PASS or
# FAIL. Then the in-process benchmarks of the state store's per-step save and per-call journal
# append. RUNS sets the runs per command (5), BIGRUNS those of 2,000 and 10,000 steps, BENCH_DIR
# where the state goes (the temporary directory; put it on a disk, not a tmpfs).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(mktemp -d)/awf
trap 'rm -rf "$(dirname "$bin")"' EXIT
CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$bin" ./cmd/awf
full=()
[ "${FULL:-}" = 1 ] && full=(-full)
go run ./scripts/procbench -awf "$bin" -runs "${RUNS:-5}" -bigruns "${BIGRUNS:-0}" -dir "${BENCH_DIR:-}" "${full[@]}" || true
echo
echo "== in-process: a step's saves at step 50 and 10,000 (10,000 iterations: the store's rewrites included)"
go test -run='^$' -bench='^BenchmarkStepSave$' -benchtime="${STEPSAVE_BENCHTIME:-10000x}" ./internal/infrastructure/statestore
echo
echo "== in-process: journal append at call 100 and 2,000, and the agent loop per call"
go test -run='^$' -bench='^Benchmark(AppendAgentStep|LoopPerCallStatestore)$' -benchtime="${BENCHTIME:-1x}" \
  ./internal/infrastructure/statestore ./internal/application/agent
