#!/usr/bin/env bash
# The lock a table PC installs from: constraints.txt, every package that pyproject.toml's
# dependencies and extras need, pinned, resolved by uv (`uv pip compile`) from PyPI alone.
# uv reads neither pip's configuration nor its own here (--no-config, --index-url), so
# a machine whose pip has extra local indexes still gets a lock of PyPI releases only.
# --universal makes one lock for every platform and Python a table PC may have.
#
#   .ci/lock.sh           write constraints.txt (`make lock`): pins already in it are kept
#                         unless pyproject.toml no longer allows them
#   .ci/lock.sh --check   fail unless constraints.txt is what `make lock` would write
#                         (`make test` runs it when pyproject.toml or the lock changed)
#
# usage: .ci/lock.sh [--check] [UV]   (UV defaults to .venv/bin/uv, the `lock` extra)
set -euo pipefail
cd "$(dirname "$0")/.."

readonly LOCK=constraints.txt
check=false
if [[ ${1:-} == --check ]]; then
    check=true
    shift
fi
uv=${1:-.venv/bin/uv}
[[ -x $uv ]] || { echo "lock: $uv is missing: run 'make test' or 'make lock'" >&2; exit 1; }

compile_into() {
    "$uv" pip compile pyproject.toml --all-extras --universal --python-version 3.11 \
        --no-config --index-url https://pypi.org/simple --custom-compile-command 'make lock' \
        --quiet --output-file "$1"
}

if ! $check; then
    compile_into "$LOCK"
    echo "lock: wrote $LOCK ($(grep -c '==' "$LOCK") pins)"
    exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# uv keeps the pins of an existing output file that still satisfy pyproject.toml, so a
# fresh compile over a copy of the lock changes nothing unless the two disagree.
cp "$LOCK" "$work/$LOCK"
compile_into "$work/$LOCK"
if ! diff -u "$LOCK" "$work/$LOCK" >"$work/diff"; then
    cat "$work/diff" >&2
    echo "lock: error: $LOCK does not match pyproject.toml: run 'make lock' and commit $LOCK" >&2
    exit 1
fi
