#!/usr/bin/env bash
# Makes the local base images the image builds use when the public ones cannot be pulled (no
# registry is reachable on the CI machines). Each is cached by its tag: an existing image is
# kept. Prints nothing on stdout; `make images` calls it through build.sh.
#
#   localhost/vantage-base/debian:bookworm-slim   Debian 12 minbase root made with debootstrap
#                                                 and `podman import` (stands in for debian:bookworm-slim)
#   localhost/vantage-base/golang:1.26-bookworm   that root + this machine's Go toolchain and
#                                                 CA certificates (stands in for golang:1.26-bookworm)
#
# The control plane and NATS images need no local base: they run FROM scratch here.
set -euo pipefail
cd "$(dirname "$0")"

DEBIAN_LOCAL=${DEBIAN_LOCAL:-localhost/vantage-base/debian:bookworm-slim}
GOLANG_LOCAL=${GOLANG_LOCAL:-localhost/vantage-base/golang:1.26-bookworm}
DEBIAN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
log() { echo "bases: $*" >&2; }

if ! podman image exists "$DEBIAN_LOCAL"; then
  root=$(mktemp -d /var/tmp/vantage-debian.XXXXXX)
  trap 'rm -rf "$root"' EXIT
  log "debootstrap bookworm (minbase) from $DEBIAN_MIRROR"
  debootstrap --variant=minbase --include=ca-certificates bookworm "$root" "$DEBIAN_MIRROR" >/dev/null
  # The same sources as the official image, security updates included (Chromium comes from
  # there), and the same trimming: no package lists, no caches.
  rm -f "$root/etc/apt/sources.list"
  cat > "$root/etc/apt/sources.list.d/debian.sources" <<SOURCES
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
  printf 'APT::Install-Recommends "false";\nAPT::Install-Suggests "false";\n' > "$root/etc/apt/apt.conf.d/90vantage-slim"
  rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/var/cache/apt/archives/*.deb \
    "$root"/usr/share/doc/* "$root"/usr/share/man/* "$root"/usr/share/locale/* "$root"/var/log/*.log
  log "podman import -> $DEBIAN_LOCAL"
  tar -C "$root" --numeric-owner -c . | podman import --quiet --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' --change 'CMD ["bash"]' - "$DEBIAN_LOCAL" >/dev/null
  rm -rf "$root"; trap - EXIT
fi

if ! podman image exists "$GOLANG_LOCAL"; then
  goroot=$(go env GOROOT)
  log "Go builder base from $DEBIAN_LOCAL + $goroot ($(go env GOVERSION)) -> $GOLANG_LOCAL"
  # The context is GOROOT itself, so nothing is copied to a temporary directory.
  podman build --quiet --pull=never --build-arg "BASE=$DEBIAN_LOCAL" -f golang-local.Containerfile -t "$GOLANG_LOCAL" "$goroot" >/dev/null
fi
