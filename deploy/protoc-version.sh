# Sourced by generate.sh and protobreak.sh: protoc is pinned. The generated code names the
# protoc that made it, and a different protoc may generate different code, so a protoc of
# another version is refused rather than used. Debian's package of this version is installed
# when none is present.
PROTOC_VERSION=3.21.12
if ! command -v protoc >/dev/null; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq && $SUDO apt-get install -y -qq "protobuf-compiler=${PROTOC_VERSION}*" >/dev/null
fi
if [ "$(protoc --version)" != "libprotoc $PROTOC_VERSION" ]; then
  echo "protoc $PROTOC_VERSION is required (found: $(protoc --version)); install it or put it first on PATH" >&2
  exit 1
fi
