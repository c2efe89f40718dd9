#!/usr/bin/env bash
# Check the deployment files with the real tools, as `make verify-deploy` (part of
# `make test`) does in CI:
#   - udev/install.sh lays out a scratch root (system user, config folder, rules, man pages
#     and shell completion generated from SHOECTL's venv);
#   - udevadm verify (systemd >= 254) checks the rules installed there;
#   - systemd-analyze verify and security check every unit (the table service, the uplink, the
#     scoreboard page, the pit and the console), each at an overall exposure of 2.0 or less.
# The validators exit 0 on some problems, so any message they print on stderr fails.
# A missing tool is installed with apt-get when running as root (never upgrading an
# installed systemd); without root such a check is skipped with a loud reason.
#
# usage: .ci/validate-deploy.sh [SHOECTL]   (SHOECTL defaults to .venv/bin/shoectl)
set -euo pipefail
cd "$(dirname "$0")/.."

readonly UNIT_EXEC=/opt/cardshoe/venv/bin/shoectl
shoectl=$(realpath -m "${1:-.venv/bin/shoectl}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

say() { echo "verify-deploy: $*"; }
fail() {
    echo "verify-deploy: FAILED: $*" >&2
    exit 1
}
skip() {
    local rule="verify-deploy: ########################################################"
    printf '%s\nverify-deploy: SKIPPED: %s\n%s\n' "$rule" "$*" "$rule" >&2
}
is_root() { ((EUID == 0)); }

# run_clean WHAT COMMAND...: fail on a non-zero exit or on anything written to stderr.
run_clean() {
    local what=$1
    shift
    if ! "$@" >"$work/out" 2>"$work/err" || [[ -s $work/err ]]; then
        cat "$work/out" "$work/err" >&2
        fail "$what"
    fi
}

have_systemd_tools() {
    command -v systemd-analyze && command -v systemd-sysusers && command -v systemd-tmpfiles
} >/dev/null

# Installs systemd only where it is absent, so an existing systemd is never upgraded.
ensure_systemd_tools() {
    have_systemd_tools && return 0
    is_root || return 1
    if dpkg-query -W -f '${Status}' systemd 2>/dev/null | grep -q ' installed'; then
        fail "systemd is installed but systemd-analyze/sysusers/tmpfiles are missing"
    fi
    say "installing systemd for systemd-analyze (apt-get)"
    apt-get update -q >"$work/apt.log" 2>&1 &&
        apt-get install -y -q --no-install-recommends --no-upgrade systemd >>"$work/apt.log" 2>&1 ||
        { cat "$work/apt.log" >&2; fail "apt-get could not install systemd"; }
}

# Prints the path of a udevadm that has `verify`: the system's when new enough,
# else the one from <codename>-backports' udev package, unpacked into $work
# (apt-get download + dpkg -x with a private apt config: nothing is installed).
find_udevadm_with_verify() {
    if udevadm verify --help >/dev/null 2>&1; then
        command -v udevadm
        return 0
    fi
    command -v apt-get >/dev/null || return 1
    local codename uri apt_dir=$work/apt
    codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
    uri=$(apt-get indextargets --no-release-info --format '$(REPO_URI) $(RELEASE)' |
        awk -v suite="$codename" '$2 == suite { print $1; exit }')
    [[ -n $codename && -n $uri ]] || return 1
    mkdir -p "$apt_dir/sources" "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
    printf 'Types: deb\nURIs: %s\nSuites: %s-backports\nComponents: main\nSigned-By: %s\n' \
        "$uri" "$codename" /usr/share/keyrings/debian-archive-keyring.gpg \
        >"$apt_dir/sources/backports.sources"
    local apt_options=(
        -q
        -o "Dir::Etc::sourcelist=/dev/null"
        -o "Dir::Etc::sourceparts=$apt_dir/sources"
        -o "Dir::State::Lists=$apt_dir/lists"
        -o "Dir::Cache=$apt_dir/cache"
        -o "APT::Sandbox::User=$(id -un)"
    )
    {
        apt-get "${apt_options[@]}" update &&
            (cd "$apt_dir" && apt-get "${apt_options[@]}" download "udev/$codename-backports")
    } >"$work/apt.log" 2>&1 || { cat "$work/apt.log" >&2; return 1; }
    dpkg -x "$apt_dir"/udev_*.deb "$work/udev"
    local udevadm
    udevadm=$(find "$work/udev" -name udevadm -type f -perm -u+x | head -n 1)
    [[ -n $udevadm ]] && "$udevadm" verify --help >/dev/null || return 1
    echo "$udevadm"
}

check_udev_rules() {
    local udevadm
    if ! udevadm=$(find_udevadm_with_verify); then
        is_root && fail "no udevadm with 'verify' could be found or downloaded"
        skip "udev rules: no udevadm >= 254 here, and the backports download failed"
        return 0
    fi
    say "udev rules: $("$udevadm" --version | head -n 1) from $udevadm"
    # Names resolve late: the cardshoe group exists in the scratch root, not on this host.
    if is_root; then
        run_clean "udevadm verify of the installed rules" \
            "$udevadm" verify --root="$work/root" --resolve-names=late
    else
        skip "laying out the install tree needs root; only udev/70-cardshoe.rules is verified"
        run_clean "udevadm verify udev/70-cardshoe.rules" \
            "$udevadm" verify --resolve-names=late udev/70-cardshoe.rules
    fi
    cat "$work/out"
}

# The units' ExecStart names the production venv; verify needs an executable there,
# so a copy points at this checkout's shoectl instead.
readonly UNITS=(
    cardshoe.service cardshoe-uplink.service cardshoe-web.service cardshoe-pit.service
    cardshoe-console.service
)
check_systemd_unit() {
    local name=$1
    [[ -x $shoectl ]] || fail "$shoectl is missing: run 'make venv' first"
    mkdir -p "$work/unit"
    local unit=$work/unit/$name
    sed "s|^ExecStart=$UNIT_EXEC |ExecStart=$shoectl |" "udev/systemd/$name" >"$unit"
    grep -q "^ExecStart=$shoectl " "$unit" ||
        fail "$name's ExecStart no longer starts with $UNIT_EXEC: update this script"
    run_clean "systemd-analyze verify $name" systemd-analyze verify "$unit"
    say "$name: systemd-analyze verify is clean"
    # The threshold counts tenths: 20 fails once the overall exposure passes 2.0.
    run_clean "systemd-analyze security of $name: exposure rose above 2.0, see the table above" \
        systemd-analyze security --offline=yes --threshold=20 "$unit"
    say "$name: $(grep -o 'Overall exposure level.*' "$work/out")"
}

if ensure_systemd_tools; then
    if is_root; then
        bash udev/install.sh --root "$work/root" --venv "$(dirname "$(dirname "$shoectl")")" \
            --shoe-serial A10KXYZ1 --shoe-port pci-0000:00:14.0-usb-0:2:1.0 \
            >"$work/install.log" 2>&1 ||
            { cat "$work/install.log" >&2; fail "udev/install.sh into a scratch root"; }
        say "install.sh: system user, config folder, rules, man pages and completion laid out in a scratch root"
    fi
    for name in "${UNITS[@]}"; do
        check_systemd_unit "$name"
    done
else
    skip "systemd-analyze is missing and installing it needs root: the unit is not checked"
fi
check_udev_rules
say "all deployment checks passed"
