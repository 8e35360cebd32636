#!/usr/bin/env bash
# Makes a throw-away CA and a server certificate for 127.0.0.1, ::1 and
# localhost, for the examples' -tls mode:
#
#   bin/certs/ca.pem           CA certificate   (client: -ca)
#   bin/certs/server.pem       server certificate, signed by the CA (server: -tls-cert)
#   bin/certs/server-key.pem   its private key  (server: -tls-key)
#
# Usage: certs.sh [DIR]   (default: bin/certs next to this script)
#
# Idempotent: keeps existing files while they are valid for another day. The
# keys are generated here and never committed (bin/ is git-ignored).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
dir=${1:-$here/bin/certs}
mkdir -p "$dir"
cd "$dir"

# Concurrent runs: one writes, the others then find the files up to date.
if command -v flock >/dev/null 2>&1; then
    exec 8>.lock
    flock 8
fi

if [[ -s ca.pem && -s server.pem && -s server-key.pem ]] &&
    openssl x509 -in server.pem -noout -checkend 86400 >/dev/null 2>&1 &&
    openssl verify -CAfile ca.pem server.pem >/dev/null 2>&1; then
    echo "certs up to date in $dir" >&2
    exit 0
fi

# Build in a private temporary directory and move into place at the end, so a
# concurrent run never sees half-written files.
tmp=$(mktemp -d "$dir/.certs.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
(
    cd "$tmp"
    openssl req -x509 -newkey rsa:2048 -nodes -days 3650 \
        -keyout ca-key.pem -out ca.pem \
        -subj "/CN=gospan examples CA" \
        -addext "basicConstraints=critical,CA:TRUE" \
        -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
    openssl req -newkey rsa:2048 -nodes \
        -keyout server-key.pem -out server.csr \
        -subj "/CN=localhost" 2>/dev/null
    cat > server.ext <<'EXT'
basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost
EXT
    openssl x509 -req -in server.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial \
        -days 825 -extfile server.ext -out server.pem 2>/dev/null
    openssl verify -CAfile ca.pem server.pem >/dev/null
)
chmod 600 "$tmp/server-key.pem" "$tmp/ca-key.pem"
mv -f "$tmp/ca-key.pem" "$tmp/ca.pem" "$tmp/server-key.pem" "$tmp/server.pem" .
echo "certs written to $dir" >&2
