#!/usr/bin/env bash
# Builds the Vantage images (make images): vantage-controlplane, vantage-agent, vantage-nats,
# tagged localhost/<name>:$IMAGE_TAG (default "local") and :<git describe>.
#
# Bases (BASES):
#   auto    (default) the public bases when they are already in local storage, otherwise the
#           local ones that bases.sh makes (debootstrap + podman import; scratch for the
#           static images) — no registry is reachable on the CI machines
#   public  the public bases, pulled when missing
#   local   always the local bases
# The Go stage compiles inside the builder image with this machine's module and build caches
# mounted (GOPROXY=off: `go list -deps` fills the cache first), so a rebuild after a code
# change takes seconds.
set -euo pipefail
cd "$(dirname "$0")/../.."
export CONTAINERS_CONF=${CONTAINERS_CONF:-$PWD/deploy/containers.conf}
./deploy/ensure-podman.sh

TAG=${IMAGE_TAG:-local}
BASES=${BASES:-auto}
PUBLIC_GO=docker.io/library/golang:1.26-bookworm
PUBLIC_STATIC=gcr.io/distroless/static-debian12:nonroot
PUBLIC_DEBIAN=docker.io/library/debian:bookworm-slim
LOCAL_GO=localhost/vantage-base/golang:1.26-bookworm
LOCAL_DEBIAN=localhost/vantage-base/debian:bookworm-slim
log() { echo "images: $*" >&2; }

pull=missing
case "$BASES" in
  public) go_image=$PUBLIC_GO static_image=$PUBLIC_STATIC debian_image=$PUBLIC_DEBIAN ;;
  local | auto)
    pull=never
    if [ "$BASES" = auto ] && podman image exists "$PUBLIC_GO" && podman image exists "$PUBLIC_STATIC" && podman image exists "$PUBLIC_DEBIAN"; then
      go_image=$PUBLIC_GO static_image=$PUBLIC_STATIC debian_image=$PUBLIC_DEBIAN
    else
      DEBIAN_LOCAL=$LOCAL_DEBIAN GOLANG_LOCAL=$LOCAL_GO ./deploy/images/bases.sh
      go_image=$LOCAL_GO static_image=scratch debian_image=$LOCAL_DEBIAN
    fi ;;
  *) log "BASES must be auto, public or local, got $BASES"; exit 2 ;;
esac
log "bases: Go $go_image, static $static_image, Debian $debian_image"

version=$(git describe --tags --always --dirty 2>/dev/null || echo dev)
revision=$(git rev-parse HEAD 2>/dev/null || echo unknown)
# The commit's time, not the build's: rebuilding a commit gives the same labels.
created=$(git log -1 --format=%cI 2>/dev/null || date -u +%FT%TZ)
nats_version=$(cd controlplane && go list -m -f '{{.Version}}' github.com/nats-io/nats-server/v2)
modcache=$(go env GOMODCACHE)
gocache=$(go env GOCACHE)
# The modules the three binaries need, into the cache the builds mount.
go list -deps ./controlplane/cmd/vantage-controlplane ./agent/cmd/vantage-agent >/dev/null
(cd controlplane && go list -deps github.com/nats-io/nats-server/v2 >/dev/null)

build() { # name, runtime base
  local name=$1 runtime=$2 start=$SECONDS
  podman build --quiet --format docker --pull="$pull" \
    -f "deploy/images/$name.Containerfile" \
    --build-arg GO_IMAGE="$go_image" --build-arg RUNTIME_IMAGE="$runtime" --build-arg GOPROXY=off \
    --build-arg VERSION="$version" --build-arg REVISION="$revision" --build-arg CREATED="$created" \
    --build-arg NATS_VERSION="$nats_version" \
    -v "$modcache:/go/pkg/mod" -v "$gocache:/root/.cache/go-build" \
    -t "localhost/vantage-$name:$TAG" -t "localhost/vantage-$name:$version" . >/dev/null
  log "localhost/vantage-$name:$TAG ($version) built in $((SECONDS - start))s, $(podman image inspect --format '{{.Size}}' "localhost/vantage-$name:$TAG" | awk '{printf "%.1f MB", $1/1e6}')"
}
build controlplane "$static_image"
build nats "$static_image"
build agent "$debian_image"
