#!/usr/bin/env bash
# Install Debian's headless Chromium, and a font with the board's Chinese labels, for the
# scoreboard's browser tests (tests/web) and screenshot. Playwright from PyPI drives the
# browser through executable_path: `playwright install` cannot download browsers on the
# table PC or in CI. --no-install-recommends keeps it small; without it apt also upgrades
# systemd and installs udev, which changes what the deployment checks rely on. A second
# run finds everything installed and does nothing (no network, no output).
#
# usage: .ci/install-browser.sh   (`make test` calls it)
set -euo pipefail

readonly BROWSER=/usr/lib/chromium/chromium-headless-shell
# chromium-headless-shell: the browser; fonts-wqy-zenhei: 莊 閒 和 大路 ... (16 MB, the
# smallest Debian font that has them).
readonly PACKAGES=(chromium-headless-shell fonts-wqy-zenhei)

installed() { dpkg-query -W -f '${Status}' "$1" 2>/dev/null | grep -q ' installed$'; }

missing=()
for package in "${PACKAGES[@]}"; do
    installed "$package" || missing+=("$package")
done
((${#missing[@]})) || exit 0
if ((EUID != 0)); then
    echo "install-browser: ${missing[*]} missing; as root run: apt-get install -y" \
        "--no-install-recommends ${missing[*]} (the browser tests fail without it)" >&2
    exit 0
fi
echo "install-browser: installing ${missing[*]} (apt-get, --no-install-recommends)"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! {
    apt-get update -q &&
        apt-get install -y -q --no-install-recommends --no-upgrade "${missing[@]}"
} >"$log" 2>&1; then
    cat "$log" >&2
    echo "install-browser: FAILED: apt-get could not install ${missing[*]}" >&2
    exit 1
fi
[[ -x $BROWSER ]] || { echo "install-browser: FAILED: no $BROWSER after install" >&2; exit 1; }
echo "install-browser: $("$BROWSER" --version 2>/dev/null || echo "${missing[*]} installed")"
