#!/usr/bin/env bash
# Runs the pwscript corpus under real Playwright Test and under the Go runtime, and fails
# where they disagree on pass/fail. Installs the pinned @playwright/test (package-lock.json)
# from the npm registry into a scratch directory; Playwright drives the machine's Chromium
# (/usr/bin/chromium-headless-shell), so no browser is downloaded.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../../../.." && pwd)"
dir="${PWSCRIPT_PARITY_DIR:-$root/.vantage/playwright-parity}"
command -v npm >/dev/null || { echo "npm is required (apt-get install nodejs npm)" >&2; exit 1; }
[ -x /usr/bin/chromium-headless-shell ] || { echo "/usr/bin/chromium-headless-shell is required (apt-get install chromium-headless-shell)" >&2; exit 1; }
mkdir -p "$dir"
cp "$here/package.json" "$here/package-lock.json" "$dir/"
(cd "$dir" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error)
cd "$root"
PWSCRIPT_PARITY_DIR="$dir" go test -count=1 -timeout 20m -run '^TestPlaywrightParity$' -v ./agent/internal/browser/pwscript
