#!/usr/bin/env bash
# Install cardshoe's udev rules, systemd unit, system user and config folder on the
# table-side PC, with shoectl's man pages and bash/zsh completion, and the table's journal
# once its configuration exists; then make udev and systemd pick them up. Safe to run
# again: the shipped files are replaced, the site's shoe list is kept unless new shoes are
# given, and an existing journal is never touched.
set -euo pipefail

usage() {
    cat <<'EOF'
usage: udev/install.sh [--root DIR] [--venv DIR] [--shoe-serial SERIAL]... [--shoe-port ID_PATH]...

  --shoe-serial SERIAL  a shoe's USB-serial adapter, by its serial number
                        (udevadm info /dev/ttyUSB0 | grep ID_SERIAL_SHORT)
  --shoe-port ID_PATH   a shoe whose adapter has no serial number, by the USB port
                        it is plugged into (udevadm info /dev/ttyUSB0 | grep ID_PATH=)
  --root DIR            install into DIR instead of / (for images and for tests);
                        udev and systemd are then not reloaded
  --venv DIR            the venv cardshoe is installed in (default /opt/cardshoe/venv);
                        the man pages and completion are generated from its shoectl

Giving any --shoe-* option rewrites 69-cardshoe-local.rules with exactly those shoes.
EOF
}

# A shoe sits behind one of these adapter families: FTDI, Silicon Labs CP210x, WCH CH340.
readonly ADAPTER_VENDORS="0403|10c4|1a86"
# Values are pasted between double quotes in a rules file, so only plain characters pass.
readonly SAFE_VALUE='^[A-Za-z0-9._:-]+$'

die() {
    echo "install.sh: error: $*" >&2
    exit 2
}

root=/
venv=/opt/cardshoe/venv
shoe_matches=()
while (($#)); do
    case $1 in
        --root) root=${2:?--root needs a folder}; shift 2 ;;
        --venv) venv=${2:?--venv needs a folder}; shift 2 ;;
        --shoe-serial | --shoe-port)
            value=${2:-}
            [[ $value =~ $SAFE_VALUE ]] || die "$1 '$value' must be letters, digits or . _ : -"
            key=ID_SERIAL_SHORT
            [[ $1 == --shoe-port ]] && key=ID_PATH
            shoe_matches+=("ENV{$key}==\"$value\"")
            shift 2
            ;;
        -h | --help) usage; exit 0 ;;
        *) usage >&2; die "unknown option '$1'" ;;
    esac
done

source_dir=$(cd "$(dirname "$0")" && pwd)
repo_dir=$(dirname "$source_dir")
live=false
[[ $(realpath -m "$root") == / ]] && live=true
if $live && ((EUID != 0)); then
    die "installing into / needs root: run it with sudo"
fi

# The pages describe the shoectl installed in the venv, so they are made from it, before
# anything is installed: a venv without cardshoe stops the install with nothing changed.
python=$venv/bin/python
"$python" -c 'import cardshoe.controller.cli.main' 2>/dev/null ||
    die "no working cardshoe in $venv ($python cannot import it): install it there first (docs/deployment.md, step 1) or give --venv DIR"
generated=$(mktemp -d)
trap 'rm -rf "$generated"' EXIT
"$python" -m cardshoe.controller.cli.reference_pages man "$generated/man" >/dev/null
"$python" -m cardshoe.controller.cli.reference_pages completion "$generated/completion" >/dev/null

rules_dir=$root/etc/udev/rules.d
local_rules=$rules_dir/69-cardshoe-local.rules

install -D -m 0644 "$source_dir/70-cardshoe.rules" "$rules_dir/70-cardshoe.rules"
install -D -m 0644 "$source_dir/systemd/cardshoe.service" "$root/etc/systemd/system/cardshoe.service"
install -D -m 0644 "$source_dir/systemd/cardshoe-uplink.service" \
    "$root/etc/systemd/system/cardshoe-uplink.service"
install -D -m 0644 "$source_dir/systemd/cardshoe.sysusers" "$root/etc/sysusers.d/cardshoe.conf"
install -D -m 0644 "$source_dir/systemd/cardshoe.tmpfiles" "$root/etc/tmpfiles.d/cardshoe.conf"
install -D -m 0644 "$repo_dir/docs/deployment.md" "$root/usr/local/share/doc/cardshoe/deployment.md"
install -D -m 0644 "$repo_dir/docs/floor.md" "$root/usr/local/share/doc/cardshoe/floor.md"
# The scoreboard page: its own unit and account, reading the journal only (docs/scoreboard.md).
install -D -m 0644 "$source_dir/systemd/cardshoe-web.service" "$root/etc/systemd/system/cardshoe-web.service"
install -D -m 0644 "$source_dir/systemd/cardshoe-web.sysusers" "$root/etc/sysusers.d/cardshoe-web.conf"
install -D -m 0644 "$repo_dir/docs/scoreboard.md" "$root/usr/local/share/doc/cardshoe/scoreboard.md"
# The table console on tty1: its own unit and account, commanding only for a PIN
# (docs/console.md).
install -D -m 0644 "$source_dir/systemd/cardshoe-console.service" \
    "$root/etc/systemd/system/cardshoe-console.service"
install -D -m 0644 "$source_dir/systemd/cardshoe-console.sysusers" \
    "$root/etc/sysusers.d/cardshoe-console.conf"
install -D -m 0644 "$repo_dir/docs/console.md" "$root/usr/local/share/doc/cardshoe/console.md"

# A command removed since the last install loses its page.
man_dir=$root/usr/local/share/man/man1
mkdir -p "$man_dir"
rm -f "$man_dir"/shoectl.1 "$man_dir"/shoectl-*.1
install -m 0644 -t "$man_dir" "$generated"/man/*.1
install -D -m 0644 "$generated/completion/shoectl" "$root/usr/share/bash-completion/completions/shoectl"
install -D -m 0644 "$generated/completion/_shoectl" "$root/usr/share/zsh/vendor-completions/_shoectl"

write_local_rules() {
    echo "# This table's shoes, written by udev/install.sh; 70-cardshoe.rules does the rest."
    echo "# Edit by rerunning the installer with --shoe-serial/--shoe-port, or by hand."
    local match
    for match in "${shoe_matches[@]}"; do
        echo "SUBSYSTEM==\"tty\", ENV{ID_BUS}==\"usb\", ENV{ID_VENDOR_ID}==\"$ADAPTER_VENDORS\", $match, ENV{CARDSHOE_ROLE}=\"shoe\""
    done
}

if ((${#shoe_matches[@]})); then
    write_local_rules >"$local_rules"
    chmod 0644 "$local_rules"
    echo "install.sh: ${#shoe_matches[@]} shoe(s) written to $local_rules"
elif [[ -e $local_rules ]]; then
    echo "install.sh: kept the shoes already listed in $local_rules"
else
    write_local_rules >"$local_rules"
    chmod 0644 "$local_rules"
    echo "install.sh: warning: no shoe configured yet; rerun with --shoe-serial SERIAL" >&2
fi

# The group must exist before udev resolves GROUP="cardshoe" in the rules.
systemd-sysusers --root="$root" "$root/etc/sysusers.d/cardshoe.conf" \
    "$root/etc/sysusers.d/cardshoe-web.conf" "$root/etc/sysusers.d/cardshoe-console.conf"
systemd-tmpfiles --root="$root" --create "$root/etc/tmpfiles.d/cardshoe.conf"

# A new table's journal is made here, never by the service: shoectl run refuses a missing
# journal, so a lost one is restored from its backup rather than silently replaced by an
# empty one (docs/journal.md). A journal already there is kept as it is.
config=$root/etc/cardshoe/table.toml
if [[ -e $config ]]; then
    init_journal=("$venv/bin/shoectl" journal init --config "$config" --if-missing)
    if $live; then
        runuser -u cardshoe -- "${init_journal[@]}"
    else
        "${init_journal[@]}"
    fi
else
    echo "install.sh: no $config yet: write it (docs/deployment.md, step 4), then rerun"
    echo "           this script, which makes the table's journal with shoectl journal init"
fi

if ! $live; then
    echo "install.sh: installed into $root"
    exit 0
fi

if [[ -S /run/udev/control ]]; then
    udevadm control --reload
    udevadm trigger --subsystem-match=tty --subsystem-match=usb
else
    echo "install.sh: warning: udevd is not running; the rules apply from the next boot" >&2
fi
if [[ -d /run/systemd/system ]]; then
    systemctl daemon-reload
else
    echo "install.sh: warning: systemd is not running; the unit loads at the next boot" >&2
fi
echo "install.sh: installed. Next, if not done yet: the config in /etc/cardshoe/table.toml"
echo "           and this script again (the journal), then"
echo "           systemctl enable --now cardshoe.service cardshoe-web.service"
echo "           (and, once [uplink] names the floor's broker, cardshoe-uplink.service;"
echo "           once [roles] names the console and its PINs, cardshoe-console.service)"
