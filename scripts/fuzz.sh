#!/usr/bin/env bash
# Run every fuzz target of the module for a short time each (default 10s).
set -euo pipefail
time=${1:-10s}
cd "$(dirname "$0")/.."
for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/func //' | sort -u); do
    echo "fuzz $pkg $target ($time)"
    go test -run='^$' -fuzz="^${target}\$" -fuzztime="$time" -fuzzminimizetime=100x "$pkg"
  done
done
