#!/usr/bin/env bash
# Builds grpc-go's own route_guide example, server and client (google.golang.org/grpc/examples,
# route_guide/server and route_guide/client), from the Go module proxy: a real program nobody here
# wrote, for the tests that trace third-party programs (RouteGuideIT).
#
#   build-route-guide.sh [--pie] [--stripped] [--out DIR]
#
# --pie       link with -buildmode=pie (a position-independent executable: loaded at a bias chosen
#             per process)
# --stripped  link with -ldflags="-s -w" (no symbol table, no DWARF: offsets from the catalog)
# --out DIR   where to put route_guide_server and route_guide_client; default
#             examples/bin/route_guide[-pie][-stripped]
#
# The example's own TLS files (its data/x509: ca_cert.pem, server_cert.pem, server_key.pem, for the
# name x.test.example.com, the client's default -server_host_override) are copied to DIR/x509: the
# programs' defaults find them through their source path, which -trimpath removes.
#
# The examples module has no release tags on the proxy, only pseudo-versions: EXAMPLES pins one (the
# route_guide sources of 2026-08-25), and GRPC pins grpc-go to a release the offsets catalog observes,
# at least what that examples version requires (v1.81.1). The Go toolchain is the one on PATH
# (GOTOOLCHAIN=auto fetches the examples' go line, 1.25, when it is older). Prints the output
# directory as the last stdout line. Incremental: a stamp records the options, versions and the go
# version; when it matches and both binaries exist nothing is built. Exit status 1 with one line on
# stderr when the module proxy cannot be reached or the build fails.
set -euo pipefail
EXAMPLES=v0.0.0-20260825154716-030ee8becb20
GRPC=v1.85.0
pie=0
stripped=0
out=
while [[ $# -gt 0 ]]; do
  case "$1" in
    --pie) pie=1 ;;
    --stripped) stripped=1 ;;
    --out) out=$2; shift ;;
    *) echo "build-route-guide.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
repo=$(cd "$(dirname "$0")/.." && pwd)
name=route_guide$([[ $pie -eq 1 ]] && echo -pie || true)$([[ $stripped -eq 1 ]] && echo -stripped || true)
out=${out:-$repo/examples/bin/$name}
mkdir -p "$out"
fail() { echo "build-route-guide.sh: $*" >&2; exit 1; }
command -v go >/dev/null || fail "no go on PATH (scripts/install-deps.sh installs it)"
export GOTOOLCHAIN=${GOTOOLCHAIN:-auto} GOFLAGS=-mod=mod
flags=()
[[ $pie -eq 1 ]] && flags+=(-buildmode=pie)
[[ $stripped -eq 1 ]] && flags+=("-ldflags=-s -w")
exec 9>"$out/.lock"
flock 9
mod=$out/.module
mkdir -p "$mod"
cat >"$mod/go.mod" <<EOF
module gospan.test/routeguide

go 1.25.0
EOF
stamp="examples $EXAMPLES grpc $GRPC pie $pie stripped $stripped $(cd "$mod" && go version 2>/dev/null)"
if [[ -x "$out/route_guide_server" && -x "$out/route_guide_client" && -f "$out/x509/ca_cert.pem" && -f "$out/.stamp" \
  && "$(cat "$out/.stamp")" == "$stamp" ]]; then
  echo "$out"
  exit 0
fi
rm -f "$mod/go.sum" "$out/.stamp"
(cd "$mod" && go get "google.golang.org/grpc/examples/route_guide/server@$EXAMPLES" "google.golang.org/grpc@$GRPC") \
  >"$out/build.log" 2>&1 || fail "go get from the module proxy failed: $(grep -m1 -E 'go: |error' "$out/build.log" || tail -1 "$out/build.log")"
for part in server client; do
  (cd "$mod" && go build "${flags[@]}" -trimpath -o "$out/route_guide_$part" "google.golang.org/grpc/examples/route_guide/$part") \
    >>"$out/build.log" 2>&1 || fail "go build route_guide/$part failed: $(tail -1 "$out/build.log")"
done
src=$(cd "$mod" && go list -m -f '{{.Dir}}' google.golang.org/grpc/examples) || fail "the examples module's directory: $src"
mkdir -p "$out/x509"
for f in ca_cert.pem server_cert.pem server_key.pem; do
  cp "$src/data/x509/$f" "$out/x509/$f" || fail "no $f in $src/data/x509"
done
chmod 644 "$out/x509/"*
echo "$stamp" >"$out/.stamp"
echo "$out"
