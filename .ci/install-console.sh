#!/usr/bin/env bash
# tmux, the real terminal in which the table console's tests (tests/console) run
# `shoectl console` and read its screen (send-keys, capture-pane). Quiet and offline when it
# is already here; --no-install-recommends --no-upgrade, so nothing else changes.
#
# usage: .ci/install-console.sh   (`make venv` and `make test` call it; installs as root)
set -euo pipefail

readonly PACKAGE=tmux
readonly TOOL=/usr/bin/tmux

[[ -x $TOOL ]] && exit 0
if ((EUID != 0)); then
    echo "install-console: $PACKAGE missing; as root run: apt-get install -y" \
        "--no-install-recommends $PACKAGE (the console tests fail without it)" >&2
    exit 0
fi
echo "install-console: installing $PACKAGE (apt-get, --no-install-recommends)"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
export DEBIAN_FRONTEND=noninteractive
if ! {
    apt-get -o DPkg::Lock::Timeout=600 update -q &&
        apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends --no-upgrade \
            "$PACKAGE"
} >"$log" 2>&1; then
    cat "$log" >&2
    echo "install-console: FAILED: apt-get could not install $PACKAGE" >&2
    exit 1
fi
[[ -x $TOOL ]] || { echo "install-console: FAILED: no $TOOL after install" >&2; exit 1; }
