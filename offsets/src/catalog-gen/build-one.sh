#!/usr/bin/env bash
# Builds the catalog generator's probe program (probe/main.go) with one Go toolchain and one
# grpc-go release, unstripped (the generator reads its DWARF).
#
#   build-one.sh GO_VERSION GRPC_VERSION OUT_DIR
#
# With GOSPAN_STRIPPED=1 it also links probe.stripped (-ldflags='-s -w'), the stripped twin the
# catalog tests resolve through the catalog (CatalogPatchReleasesIT).
#
# GO_VERSION is an exact release (1.16.15, 1.21.13, 1.26.8). The go on PATH is used when it is
# that version; otherwise the toolchain module golang.org/toolchain@v0.0.1-goX.Y.Z.linux-amd64 is
# fetched from the Go module proxy (works back to Go 1.16). The module requires only that grpc-go
# and `go mod tidy` fills in x/net, protobuf, genproto as that release asked for, like an
# application of its time. OUT_DIR receives `probe`, `modules.txt` (go version -m) and
# `build.log`. Exit status non-zero with the reason at the end of build.log (and stderr).
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: $0 GO_VERSION GRPC_VERSION OUT_DIR" >&2; exit 2; }
GO_VERSION=${1#go}
GRPC_VERSION=$2
OUT=$3
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
LOG=$OUT/build.log
# Incremental: a finished build (.done, holding the hash of probe/main.go it was built from) is kept
# while probe/main.go is unchanged; a failed one (.failed) is not retried; delete OUT_DIR to retry.
STRIPPED=${GOSPAN_STRIPPED:-0}
SOURCE=$(sha256sum "$HERE/probe/main.go" | cut -c1-16)
[ -f "$OUT/.done" ] && [ "$(cat "$OUT/.done")" = "$SOURCE" ] && [ -x "$OUT/probe" ] \
  && { [ "$STRIPPED" != 1 ] || [ -x "$OUT/probe.stripped" ]; } && { echo "$OUT"; exit 0; }
[ -f "$OUT/.failed" ] && [ "$(cat "$OUT/.failed")" = "$SOURCE" ] && { tail -1 "$LOG" >&2; exit 1; }
rm -f "$OUT/.done" "$OUT/.failed"
: >"$LOG"
fail() { echo "build-one.sh: $*" | tee -a "$LOG" >&2; echo "$SOURCE" >"$OUT/.failed"; exit 1; }

command -v go >/dev/null || fail "no 'go' on PATH"
if [ "$(GOTOOLCHAIN=local go env GOVERSION)" = "go$GO_VERSION" ]; then
  GO=$(command -v go)
else
  TC="golang.org/toolchain@v0.0.1-go$GO_VERSION.linux-amd64"
  DIR=$(cd /tmp && GOTOOLCHAIN=local GOFLAGS=-mod=mod go mod download -json "$TC" 2>>"$LOG" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p') || true
  [ -n "$DIR" ] && [ -f "$DIR/bin/go" ] || fail "cannot fetch Go toolchain $TC"
  chmod u+x "$DIR"/bin/* "$DIR"/pkg/tool/*/* 2>/dev/null || true
  GO=$DIR/bin/go
fi
MINOR=$(echo "$GO_VERSION" | cut -d. -f2)
if [ "$MINOR" -ge 18 ]; then export GOFLAGS=-buildvcs=false; else export GOFLAGS=; fi
export GOENV=off GOTOOLCHAIN=local GO111MODULE=on CGO_ENABLED=0

WORK=$(mktemp -d "${TMPDIR:-/tmp}/gospan-catalog.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cp "$HERE/probe/main.go" "$WORK/"
cd "$WORK"
printf 'module gospan.dev/catalog-probe\n\ngo 1.16\n' >go.mod
"$GO" mod edit "-require=google.golang.org/grpc@$GRPC_VERSION" ${GOSPAN_PIN:+"-require=$GOSPAN_PIN"} >>"$LOG" 2>&1 || fail "go mod edit failed"
"$GO" mod tidy >>"$LOG" 2>&1 || fail "go mod tidy failed (grpc $GRPC_VERSION with go$GO_VERSION): $(grep -v '^go: downloading' "$LOG" | tail -3 | tr '\n' ' ')"
"$GO" build -o "$OUT/probe.tmp" . >>"$LOG" 2>&1 || fail "go build failed (grpc $GRPC_VERSION with go$GO_VERSION): $(grep -v '^go: downloading' "$LOG" | tail -3 | tr '\n' ' ')"
if [ "$STRIPPED" = 1 ]; then
  "$GO" build -ldflags='-s -w' -o "$OUT/probe.stripped" . >>"$LOG" 2>&1 || fail "go build -ldflags='-s -w' failed (grpc $GRPC_VERSION with go$GO_VERSION)"
fi
mv -f "$OUT/probe.tmp" "$OUT/probe"
"$GO" version -m "$OUT/probe" >"$OUT/modules.txt" 2>>"$LOG" || true
echo "$SOURCE" >"$OUT/.done"
echo "$OUT"
