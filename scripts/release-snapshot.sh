#!/usr/bin/env bash
# make release-snapshot: builds a whole release locally, publishing nothing. Archives for
# linux and darwin (amd64, arm64) and windows (amd64), checksums.txt and one SBOM per binary
# in dist/, and the image ghcr.io/awf-dev/awf:VERSION in the local Docker engine. Installs
# goreleaser v2.15.1 (Go module proxy) and Debian's busybox-static (the image's base) when
# absent, then checks that the snapshot's awf --version prints its version and commit.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$(go env GOPATH)/bin:$PATH"
GORELEASER_VERSION=v2.15.1

if ! goreleaser --version 2>/dev/null | grep -q "${GORELEASER_VERSION#v}"; then
  echo "installing goreleaser $GORELEASER_VERSION"
  go install "github.com/goreleaser/goreleaser/v2@$GORELEASER_VERSION"
fi
busybox=""
for p in /bin/busybox /usr/bin/busybox; do
  if [ -x "$p" ] && ! ldd "$p" >/dev/null 2>&1; then busybox=$p; break; fi # static only
done
if [ -z "$busybox" ]; then
  apt-get install -y -qq busybox-static || { apt-get update -qq && apt-get install -y -qq busybox-static; }
  busybox=/bin/busybox
fi

# The image's base: the integration tests' busybox root file system, built from scratch.
ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
cp testdata/images/busybox/Dockerfile "$ctx/"
cp "$busybox" "$ctx/busybox"
export AWF_BASE_IMAGE=awf-release-base:busybox
docker build -q -t "$AWF_BASE_IMAGE" "$ctx" >/dev/null

AWF_COMMIT=$(git rev-parse --short HEAD)
export AWF_COMMIT
start=$SECONDS
goreleaser release --snapshot --clean
echo "goreleaser took $((SECONDS - start))s"

bin=$(ls dist/awf_linux_amd64*/awf)
version=$("$bin" --version)
echo "$bin --version: $version"
case "$version" in
  *"(commit "*")") ;;
  *) echo "the snapshot's --version lacks its commit: $version" >&2; exit 1 ;;
esac
ls dist/*.tar.gz dist/*.zip dist/checksums.txt dist/*.sbom.txt
(cd dist && sha256sum --check --quiet checksums.txt)
image=$(docker images --format '{{.Repository}}:{{.Tag}}' ghcr.io/awf-dev/awf | head -1)
echo "image $image: $(docker run --rm "$image" --version)"
