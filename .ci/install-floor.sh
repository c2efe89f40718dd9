#!/usr/bin/env bash
# The floor's real parts for `make test` and `make floor-demo`: Debian's mosquitto (the MQTT
# broker) and PostgreSQL 15 (the floor's system of record), and openssl for the test
# certificates; and strace, with which a crash test kills a real shoectl at its Nth write.
# Quiet and offline when they are already here; never upgrades anything else
# (--no-install-recommends --no-upgrade: recommends would pull in udev and a newer systemd).
#
# usage: .ci/install-floor.sh           install what is missing (`make test`; needs root)
#        .ci/install-floor.sh --check   install nothing: say in one line what is missing and
#                                       how to get it, and fail (`make floor-demo`)
set -euo pipefail

readonly PACKAGES=(mosquitto postgresql-15 openssl strace)
readonly TOOLS=(
    /usr/sbin/mosquitto /usr/lib/postgresql/15/bin/initdb /usr/bin/openssl /usr/bin/strace
)

missing=()
for i in "${!TOOLS[@]}"; do
    [[ -x ${TOOLS[$i]} ]] || missing+=("${PACKAGES[$i]}")
done
((${#missing[@]})) || exit 0

if [[ ${1:-} == --check ]] || ((EUID != 0)); then
    echo "install-floor: error: ${missing[*]} missing: install Debian's packages with" \
        "'sudo apt-get install --no-install-recommends ${missing[*]}'" >&2
    exit 1
fi
echo "install-floor: installing ${missing[*]} (apt-get)"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
export DEBIAN_FRONTEND=noninteractive
# Other jobs on this machine may hold apt's locks for a while: wait for them.
apt_wait=(-o DPkg::Lock::Timeout=600)
update_lists() {
    local try
    for try in $(seq 60); do
        apt-get "${apt_wait[@]}" update -q >"$log" 2>&1 && return 0
        grep -q 'Could not get lock' "$log" || return 1
        sleep 5
    done
    return 1
}
if ! { update_lists && apt-get "${apt_wait[@]}" install -y -q --no-install-recommends \
    --no-upgrade "${missing[@]}" >>"$log" 2>&1; }; then
    cat "$log" >&2
    echo "install-floor: error: apt-get could not install ${missing[*]}" >&2
    exit 1
fi
# Debian's packages start a system-wide broker and cluster where an init system runs; the
# tests start their own throwaway instances and need neither.
