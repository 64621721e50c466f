#!/usr/bin/env bash
# Writes the SBOM of a Go binary: the module list the Go toolchain embedded in it at build
# time (go version -m: path, version and go.sum hash of every module linked in, and the build
# settings). Usage: scripts/sbom.sh BINARY DOCUMENT (goreleaser's sboms section calls it).
set -euo pipefail
bin=$1 doc=$2
[ -e "$bin" ] || bin=../$1 # goreleaser runs this in dist/ with a path from the repository root
{
  echo "# SBOM of $(basename "$bin"): modules and build settings embedded by the Go toolchain"
  echo "# (go version -m). dep lines: module path, version, go.sum hash."
  go version -m "$bin"
} >"$doc"
