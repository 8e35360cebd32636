#!/usr/bin/env bash
# Builds the inspection benchmark's large binary: gopls (golang.org/x/tools/gopls) with grpc-go linked in
# (grpcprobe.go.txt), about 45 MB with DWARF, and the same linked with -s -w (gopls-grpc.stripped).
# Prints the unstripped binary's path as the last stdout line.
#   build-big.sh OUT_DIR [GOPLS_VERSION] [GRPC_VERSION]
set -euo pipefail
OUT=${1:?usage: build-big.sh OUT_DIR [GOPLS_VERSION] [GRPC_VERSION]}
GOPLS=${2:-v0.20.0}
GRPC=${3:-v1.60.1}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
BIN="$OUT/gopls-grpc"
if [ -x "$BIN" ] && [ -x "$BIN.stripped" ]; then
  echo "$BIN"
  exit 0
fi
export GOTOOLCHAIN=local GOFLAGS=-buildvcs=false
SRC=$(cd /tmp && go mod download -json "golang.org/x/tools/gopls@$GOPLS" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -n "$SRC" ] || { echo "cannot fetch gopls $GOPLS" >&2; exit 1; }
WORK="$OUT/gopls-src"
rm -rf "$WORK"
cp -r "$SRC" "$WORK"
chmod -R u+w "$WORK"
cp "$HERE/grpcprobe.go.txt" "$WORK/grpcprobe.go"
# No `go mod tidy`: gopls test packages need unpublished x/tools internals.
(cd "$WORK" && go get "google.golang.org/grpc@$GRPC" && go build -mod=mod -o "$BIN.tmp" . \
  && go build -mod=mod -ldflags='-s -w' -o "$BIN.stripped.tmp" .) >&2
mv "$BIN.tmp" "$BIN"
mv "$BIN.stripped.tmp" "$BIN.stripped"
rm -rf "$WORK"
echo "$BIN"
