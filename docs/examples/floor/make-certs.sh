#!/usr/bin/env bash
# The floor's certificates with openssl (docs/floor.md): one CA, the broker's certificate,
# and one client certificate per name given: each table id, and cardshoe-ingest.
# Existing files are kept, so running it again with a new table id adds only that table.
#
# usage: make-certs.sh DIR BROKER_HOST NAME...
set -euo pipefail
(($# >= 3)) || { echo "usage: make-certs.sh DIR BROKER_HOST NAME..." >&2; exit 2; }
dir=$1 host=$2
shift 2
mkdir -p "$dir"
cd "$dir"
umask 077

new_key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }

if [[ ! -f ca.crt ]]; then
    new_key ca.key
    openssl req -x509 -new -key ca.key -out ca.crt -days 3650 -subj "/CN=cardshoe floor CA" \
        -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign"
fi

# issue NAME EXTENSIONS: a key and a certificate with CN=NAME signed by the CA.
issue() {
    local name=$1 extensions=$2
    [[ -f $name.crt ]] && return 0
    new_key "$name.key"
    openssl req -new -key "$name.key" -out "$name.csr" -subj "/CN=$name"
    openssl x509 -req -in "$name.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 825 \
        -out "$name.crt" -extfile <(printf '%s\n' "$extensions") 2>/dev/null
    rm "$name.csr"
}

if [[ $host =~ ^[0-9.]+$ ]]; then san="IP:$host"; else san="DNS:$host"; fi
issue broker "subjectAltName=$san
extendedKeyUsage=serverAuth"
for name in "$@"; do
    [[ $name =~ ^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$ ]] || {
        echo "make-certs.sh: '$name' is not a table id (letters, digits, . _ -)" >&2
        exit 2
    }
    issue "$name" "extendedKeyUsage=clientAuth"
done
chmod 0644 ./*.crt
echo "make-certs.sh: certificates in $dir: ca.crt broker.crt $*"
