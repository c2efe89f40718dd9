#!/usr/bin/env bash
# CI: what a table PC installs is the wheel, not this checkout. Build it from the files a
# fresh clone has, check it holds every module and data file of the three code folders
# (a subpackage missing from pyproject.toml's `packages`, or data missing from
# `package-data`, fails here) and the LICENSE, check the sdist carries the LICENSE too,
# install the wheel into a clean venv with the lock (constraints.txt) as a table PC does,
# and run shoectl from there, outside the checkout, so nothing can be imported from the
# source folders.
#
# usage: .ci/wheel-check.sh [PYTHON]   (PYTHON builds the wheel; defaults to .venv/bin/python)
set -euo pipefail
cd "$(dirname "$0")/.."

readonly CODE_FOLDERS=(controller drivers firmware_sim)
readonly LOCK=$PWD/constraints.txt
builder=$(realpath -ms "${1:-.venv/bin/python}")  # -s: a venv's python is a link
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

say() { echo "wheel-check: $*"; }
fail() {
    echo "wheel-check: FAILED: $*" >&2
    exit 1
}

# run_logged WHAT COMMAND...: the command's output goes to a log, shown only if it fails.
run_logged() {
    local what=$1
    shift
    "$@" >"$work/log" 2>&1 || { cat "$work/log" >&2; fail "$what"; }
}

[[ -x $builder ]] || fail "$builder is missing: run 'make venv' first"

# Tracked and new (not ignored) files only: a stale build/ or egg-info never reaches the wheel.
mkdir "$work/src"
git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t "$work/src"
run_logged "pip wheel" "$builder" -m pip wheel --no-deps --wheel-dir "$work/dist" "$work/src"
wheel=$(echo "$work"/dist/cardshoe-*.whl)
[[ -f $wheel ]] || fail "pip wheel made no cardshoe wheel"
say "built $(basename "$wheel")"
release=$(basename "$wheel" | cut -d- -f1-2)

"$builder" - "$wheel" "$release" "$work/src" "${CODE_FOLDERS[@]}" <<'EOF' || fail "the wheel is incomplete"
"""Every file of the code folders must be in the wheel under cardshoe/, and nothing else
but its metadata, which must hold the LICENSE."""
import sys
import zipfile
from pathlib import Path

wheel, release, source, *folders = sys.argv[1:]
names = set(zipfile.ZipFile(wheel).namelist())
expected = {
    f"cardshoe/{path.relative_to(source).as_posix()}"
    for folder in folders
    for path in Path(source, folder).rglob("*")
    if path.is_file()
}
licence = f"{release}.dist-info/licenses/LICENSE"
if licence not in names:
    print(f"wheel-check: missing from the wheel: {licence} (pyproject.toml's license-files)",
          file=sys.stderr)
    sys.exit(1)
missing = sorted(expected - names)
stray = sorted(n for n in names if not n.startswith(("cardshoe/", "cardshoe-")))
for name in missing:
    print(f"wheel-check: missing from the wheel: {name} (a new subpackage goes into "
          "[tool.setuptools] packages, a data file into package-data)", file=sys.stderr)
for name in stray:
    print(f"wheel-check: outside the cardshoe package: {name}", file=sys.stderr)
if missing or stray:
    sys.exit(1)
print(f"wheel-check: the wheel holds all {len(expected)} files of {', '.join(folders)},"
      " and the LICENSE")
EOF

run_logged "python -m build --sdist" "$builder" -m build --sdist --outdir "$work/dist" "$work/src"
[[ -f $work/dist/$release.tar.gz ]] || fail "python -m build made no $release.tar.gz"
tar -tzf "$work/dist/$release.tar.gz" >"$work/sdist-files"
grep -qx "$release/LICENSE" "$work/sdist-files" ||
    fail "the sdist $release.tar.gz has no LICENSE at its root"
say "built $release.tar.gz, with the LICENSE"

venv=$work/venv
run_logged "a clean venv" python3 -m venv "$venv"
run_logged "pip install of the wheel into a clean venv, with the lock" \
    "$venv/bin/pip" install --constraint "$LOCK" "$wheel"

cd "$work"
"$venv/bin/python" -c 'import cardshoe.controller as c; print(c.__file__)' >"$work/where"
[[ $(cat "$work/where") == "$venv"/* ]] || fail "cardshoe imported from $(cat "$work/where")"

version=$(basename "$wheel" | cut -d- -f2)
[[ $("$venv/bin/shoectl" --version) == "shoectl, version $version" ]] ||
    fail "shoectl --version does not say $version"
say "shoectl --version: $version"
run_logged "shoectl odds --game macau-1 --decks 8" \
    "$venv/bin/shoectl" odds --game macau-1 --decks 8
grep -q "house edge" "$work/log" || { cat "$work/log" >&2; fail "odds printed no house edge"; }
say "shoectl odds --game macau-1 --decks 8: $(grep -c . "$work/log") lines"
run_logged "shoectl demo --transport inproc --rounds 3" \
    "$venv/bin/shoectl" demo --transport inproc --rounds 3
grep -q "ended after 3 rounds.*reconciled" "$work/log" ||
    { cat "$work/log" >&2; fail "the demo did not end reconciled after 3 rounds"; }
say "shoectl demo --transport inproc --rounds 3: $(grep 'ended after' "$work/log")"
# udev/install.sh makes the man pages and completion this way on a table PC.
run_logged "man pages from the installed wheel" \
    "$venv/bin/python" -m cardshoe.controller.cli.reference_pages man "$work/man"
run_logged "shell completion from the installed wheel" \
    "$venv/bin/python" -m cardshoe.controller.cli.reference_pages completion "$work/completion"
say "$(ls "$work/man" | wc -l) man pages and bash/zsh completion made from the installed wheel"
say "the wheel installs and runs"
