#!/usr/bin/env bash
# Install Debian's headless Chromium for the scoreboard's browser tests (tests/web).
# Playwright from PyPI drives it through executable_path: `playwright install` cannot
# download browsers on the table PC or in CI. --no-install-recommends keeps it to about
# 19 packages; without it apt also upgrades systemd and installs udev, which changes what
# the deployment checks rely on. A second run finds the browser and does nothing.
#
# usage: .ci/install-browser.sh   (`make test` calls it)
set -euo pipefail

readonly BROWSER=/usr/lib/chromium/chromium-headless-shell
readonly PACKAGE=chromium-headless-shell

if [[ -x $BROWSER ]]; then
    exit 0
fi
if ((EUID != 0)); then
    echo "install-browser: $BROWSER is missing; as root run: apt-get install -y" \
        "--no-install-recommends $PACKAGE (the browser tests are skipped without it)" >&2
    exit 0
fi
echo "install-browser: installing $PACKAGE (apt-get, --no-install-recommends)"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! { apt-get update -q && apt-get install -y -q --no-install-recommends --no-upgrade "$PACKAGE"; } \
    >"$log" 2>&1; then
    cat "$log" >&2
    echo "install-browser: FAILED: apt-get could not install $PACKAGE" >&2
    exit 1
fi
[[ -x $BROWSER ]] || { echo "install-browser: FAILED: $PACKAGE has no $BROWSER" >&2; exit 1; }
echo "install-browser: $("$BROWSER" --version 2>/dev/null || echo "$PACKAGE installed")"
