#!/usr/bin/env bash
# Makes sure PostgreSQL and NATS (JetStream) answer on 127.0.0.1, and that headless Chromium is
# installed: starts the machine's services when they are installed but stopped, installs them
# from Debian when absent. Idempotent; used by .ci/run and deploy/run-local.sh.
set -euo pipefail

log() { echo "ensure-services: $*" >&2; }
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
apt_updated=""
apt_install() {
  [ -n "$apt_updated" ] || { $SUDO apt-get update -qq >/dev/null; apt_updated=1; }
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "$@" >/dev/null
}
wait_for() { # name, command
  for _ in $(seq 1 60); do eval "$2" >/dev/null 2>&1 && return 0; sleep 0.5; done
  log "$1 did not come up"; return 1
}

# PostgreSQL
if ! pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then
  if ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
    log "installing PostgreSQL"; apt_install postgresql
  fi
  if ! command -v pg_isready >/dev/null; then apt_install postgresql-client; fi
  ver=$(ls /usr/lib/postgresql | sort -V | tail -1)
  if [ ! -d "/etc/postgresql/$ver/main" ]; then $SUDO pg_createcluster "$ver" main >/dev/null; fi
  conf="/etc/postgresql/$ver/main"
  # Local trust auth over TCP, as on the development machines.
  if ! grep -q 'vantage-ci' "$conf/pg_hba.conf"; then
    printf '# vantage-ci\nhost all all 127.0.0.1/32 trust\nhost all all ::1/128 trust\nlocal all all trust\n' | $SUDO tee /tmp/hba >/dev/null
    $SUDO sh -c "cat $conf/pg_hba.conf >> /tmp/hba && cp /tmp/hba $conf/pg_hba.conf"
  fi
  log "starting PostgreSQL $ver"
  $SUDO pg_ctlcluster --skip-systemctl-redirect "$ver" main start || true
  wait_for PostgreSQL "pg_isready -q -h 127.0.0.1 -p 5432"
fi

# NATS with JetStream
if ! (exec 3<>/dev/tcp/127.0.0.1/4222) 2>/dev/null; then
  if ! command -v nats-server >/dev/null; then log "installing nats-server"; apt_install nats-server; fi
  log "starting nats-server"
  $SUDO mkdir -p /var/lib/nats-server
  $SUDO start-stop-daemon --start --oknodo --background --exec "$(command -v nats-server)" -- \
    -a 127.0.0.1 -p 4222 -js -sd /var/lib/nats-server -l /var/log/nats-server.log
  wait_for NATS "exec 3<>/dev/tcp/127.0.0.1/4222"
fi

# Headless Chromium for browser checks and status-page tests.
if ! command -v chromium-headless-shell >/dev/null && ! command -v chromium >/dev/null; then
  log "installing chromium-headless-shell"
  apt_install chromium-headless-shell || apt_install chromium
fi
log "PostgreSQL, NATS and Chromium are ready"
