#!/usr/bin/env bash
# Cross-checks awf for the release targets besides linux (issue 18): for each GOOS/GOARCH it
# builds the binary, vets every package (with that GOOS's build tags), and compiles and links
# every test binary with go test -c, without running them. Usage: scripts/cross.sh [OS/ARCH...]
# (default: darwin/arm64 darwin/amd64 windows/amd64). Prints the time each target took.
set -euo pipefail
cd "$(dirname "$0")/.."
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(darwin/arm64 darwin/amd64 windows/amd64)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# go test -c -o DIR/ takes many packages at once (linked in parallel) as long as no two test
# binaries share a name (cmd/awf and the root package are both awf.test): those go alone.
pkgs=$(go list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}{{end}}' ./...)
batch=() alone=()
declare -A seen=()
for p in $pkgs; do
  name=${p##*/}
  if [ -n "${seen[$name]:-}" ]; then alone+=("$p"); else seen[$name]=1; batch+=("$p"); fi
done

for t in "${targets[@]}"; do
  start=$SECONDS
  export GOOS=${t%/*} GOARCH=${t#*/}
  go build -o "$out/awf-$GOOS-$GOARCH" ./cmd/awf
  go vet ./...
  dir="$out/$GOOS-$GOARCH"
  mkdir -p "$dir/alone"
  go test -c -vet=off -o "$dir/" "${batch[@]}"
  for p in "${alone[@]}"; do
    go test -c -vet=off -o "$dir/alone/${p//\//_}.test" "$p"
  done
  echo "$t: binary, vet and $(( ${#batch[@]} + ${#alone[@]} )) test binaries in $((SECONDS - start))s"
done
